import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Foundation schema: companies, their assets, the activity trail, agents with their API keys
 * (the guard authenticates keys), budget policy rows (created with a company budget),
 * memberships and grants (read by the authorization decision), and the core of goals and
 * projects (issues are placed in them). Domains extend these in their own migrations.
 * Every company-scoped table cascades on company delete.
 */
export class Foundation1763700000000 implements MigrationInterface {
  name = 'Foundation1763700000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE EXTENSION IF NOT EXISTS pgcrypto`);
    await q.query(`
      CREATE TABLE companies (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        name text NOT NULL,
        description text,
        status text NOT NULL DEFAULT 'active' CHECK (status IN ('active','paused','archived')),
        pause_reason text,
        issue_prefix text NOT NULL,
        issue_counter integer NOT NULL DEFAULT 1,
        budget_monthly_cents integer NOT NULL DEFAULT 0 CHECK (budget_monthly_cents >= 0),
        spent_monthly_cents integer NOT NULL DEFAULT 0,
        require_board_approval_for_new_agents boolean NOT NULL DEFAULT false,
        brand_color text,
        logo_asset_id uuid,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    // issue identifiers are <prefix>-<n>: the prefix is unique per instance
    await q.query(`CREATE UNIQUE INDEX companies_issue_prefix_key ON companies (issue_prefix)`);
    await q.query(`CREATE INDEX companies_status_idx ON companies (status)`);

    await q.query(`
      CREATE TABLE assets (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        company_id uuid NOT NULL REFERENCES companies(id) ON DELETE CASCADE,
        kind text NOT NULL,
        content_type text NOT NULL,
        byte_size integer NOT NULL,
        sha256 text NOT NULL,
        storage_key text NOT NULL,
        original_filename text,
        created_by_user_id text,
        created_by_agent_id uuid,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX assets_company_idx ON assets (company_id)`);
    await q.query(`ALTER TABLE companies ADD CONSTRAINT companies_logo_asset_fk FOREIGN KEY (logo_asset_id) REFERENCES assets(id) ON DELETE SET NULL`);

    await q.query(`
      CREATE TABLE activity_log (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        company_id uuid NOT NULL REFERENCES companies(id) ON DELETE CASCADE,
        actor_type text NOT NULL CHECK (actor_type IN ('agent','user','system')),
        actor_id text NOT NULL,
        action text NOT NULL,
        entity_type text NOT NULL,
        entity_id text NOT NULL,
        agent_id uuid,
        run_id uuid,
        details jsonb,
        created_at timestamptz NOT NULL DEFAULT clock_timestamp()
      )`);
    // the feed is read newest first per company, optionally narrowed to one entity or agent
    await q.query(`CREATE INDEX activity_company_created_idx ON activity_log (company_id, created_at DESC)`);
    await q.query(`CREATE INDEX activity_entity_idx ON activity_log (company_id, entity_type, entity_id, created_at DESC)`);
    await q.query(`CREATE INDEX activity_agent_idx ON activity_log (company_id, agent_id, created_at DESC) WHERE agent_id IS NOT NULL`);
    // append-only: refuse UPDATE at the database level
    await q.query(`
      CREATE FUNCTION activity_log_immutable() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN RAISE EXCEPTION 'activity_log is append-only'; END $$`);
    await q.query(`CREATE TRIGGER activity_log_no_update BEFORE UPDATE ON activity_log FOR EACH ROW EXECUTE FUNCTION activity_log_immutable()`);

    await q.query(`
      CREATE TABLE agents (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        company_id uuid NOT NULL REFERENCES companies(id) ON DELETE CASCADE,
        name text NOT NULL,
        url_key text NOT NULL,
        role text NOT NULL DEFAULT 'general',
        title text,
        capabilities text NOT NULL DEFAULT '',
        reports_to uuid REFERENCES agents(id) ON DELETE SET NULL,
        adapter_type text NOT NULL,
        adapter_config jsonb NOT NULL DEFAULT '{}',
        runtime_config jsonb NOT NULL DEFAULT '{}',
        budget_monthly_cents integer NOT NULL DEFAULT 0 CHECK (budget_monthly_cents >= 0),
        spent_monthly_cents integer NOT NULL DEFAULT 0,
        status text NOT NULL DEFAULT 'idle'
          CHECK (status IN ('active','paused','idle','running','error','pending_approval','terminated')),
        pause_reason text,
        permissions jsonb NOT NULL DEFAULT '{}',
        metadata jsonb NOT NULL DEFAULT '{}',
        terminated_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX agents_company_idx ON agents (company_id, status)`);
    await q.query(`CREATE INDEX agents_reports_to_idx ON agents (reports_to) WHERE reports_to IS NOT NULL`);
    // URL keys are unique among the company's non-terminated agents
    await q.query(`CREATE UNIQUE INDEX agents_company_url_key ON agents (company_id, url_key) WHERE status <> 'terminated'`);

    await q.query(`
      CREATE TABLE agent_api_keys (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        company_id uuid NOT NULL REFERENCES companies(id) ON DELETE CASCADE,
        agent_id uuid NOT NULL REFERENCES agents(id) ON DELETE CASCADE,
        name text NOT NULL,
        token_hash text NOT NULL,
        token_prefix text NOT NULL,
        revoked_at timestamptz,
        last_used_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    // every agent request looks its key up by hash
    await q.query(`CREATE UNIQUE INDEX agent_api_keys_hash_key ON agent_api_keys (token_hash)`);
    await q.query(`CREATE INDEX agent_api_keys_agent_idx ON agent_api_keys (agent_id)`);

    await q.query(`
      CREATE TABLE budget_policies (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        company_id uuid NOT NULL REFERENCES companies(id) ON DELETE CASCADE,
        scope_type text NOT NULL CHECK (scope_type IN ('company','agent','project')),
        scope_id uuid NOT NULL,
        metric text NOT NULL DEFAULT 'billed_cents',
        window_kind text NOT NULL DEFAULT 'calendar_month_utc',
        amount integer NOT NULL CHECK (amount >= 0),
        warn_percent integer NOT NULL DEFAULT 80 CHECK (warn_percent BETWEEN 1 AND 100),
        hard_stop_enabled boolean NOT NULL DEFAULT true,
        notify_enabled boolean NOT NULL DEFAULT true,
        is_active boolean NOT NULL DEFAULT true,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE UNIQUE INDEX budget_policies_scope_key ON budget_policies (company_id, scope_type, scope_id, metric, window_kind)`);

    // memberships and grants: the authorization decision reads them for users and agents alike
    await q.query(`
      CREATE TABLE company_memberships (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        company_id uuid NOT NULL REFERENCES companies(id) ON DELETE CASCADE,
        principal_type text NOT NULL CHECK (principal_type IN ('user','agent')),
        principal_id text NOT NULL,
        membership_role text NOT NULL DEFAULT 'member',
        status text NOT NULL DEFAULT 'active' CHECK (status IN ('active','inactive')),
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE UNIQUE INDEX company_memberships_principal_key ON company_memberships (company_id, principal_type, principal_id)`);
    await q.query(`CREATE INDEX company_memberships_principal_idx ON company_memberships (principal_type, principal_id)`);
    await q.query(`
      CREATE TABLE principal_permission_grants (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        company_id uuid NOT NULL REFERENCES companies(id) ON DELETE CASCADE,
        principal_type text NOT NULL CHECK (principal_type IN ('user','agent')),
        principal_id text NOT NULL,
        permission_key text NOT NULL,
        scope jsonb,
        granted_by text,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX principal_grants_lookup_idx ON principal_permission_grants (company_id, principal_type, principal_id, permission_key)`);

    await q.query(`
      CREATE TABLE goals (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        company_id uuid NOT NULL REFERENCES companies(id) ON DELETE CASCADE,
        title text NOT NULL,
        description text,
        level text NOT NULL DEFAULT 'task' CHECK (level IN ('company','team','agent','task')),
        status text NOT NULL DEFAULT 'planned' CHECK (status IN ('planned','active','achieved','cancelled')),
        parent_id uuid REFERENCES goals(id) ON DELETE SET NULL,
        owner_agent_id uuid REFERENCES agents(id) ON DELETE SET NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX goals_company_idx ON goals (company_id)`);

    await q.query(`
      CREATE TABLE projects (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        company_id uuid NOT NULL REFERENCES companies(id) ON DELETE CASCADE,
        name text NOT NULL,
        url_key text NOT NULL,
        description text,
        status text NOT NULL DEFAULT 'backlog' CHECK (status IN ('backlog','planned','in_progress','completed','cancelled')),
        goal_id uuid REFERENCES goals(id) ON DELETE SET NULL,
        lead_agent_id uuid REFERENCES agents(id) ON DELETE SET NULL,
        target_date date,
        color text,
        env jsonb NOT NULL DEFAULT '{}',
        execution_workspace_policy jsonb,
        paused_at timestamptz,
        pause_reason text,
        archived_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX projects_company_idx ON projects (company_id)`);
    await q.query(`CREATE INDEX projects_url_key_idx ON projects (company_id, url_key)`);
    await q.query(`
      CREATE TABLE project_goals (
        project_id uuid NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
        goal_id uuid NOT NULL REFERENCES goals(id) ON DELETE CASCADE,
        position integer NOT NULL DEFAULT 0,
        PRIMARY KEY (project_id, goal_id)
      )`);

    // the heartbeat engine's durable queue and runs; the guard reads run liveness from here
    await q.query(`
      CREATE TABLE agent_wakeup_requests (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        company_id uuid NOT NULL REFERENCES companies(id) ON DELETE CASCADE,
        agent_id uuid NOT NULL REFERENCES agents(id) ON DELETE CASCADE,
        source text NOT NULL CHECK (source IN ('timer','assignment','on_demand','automation')),
        trigger_detail text CHECK (trigger_detail IN ('manual','ping','callback','system')),
        reason text,
        payload jsonb NOT NULL DEFAULT '{}',
        issue_id uuid,
        idempotency_key text,
        force_fresh_session boolean NOT NULL DEFAULT false,
        status text NOT NULL DEFAULT 'queued'
          CHECK (status IN ('queued','claimed','coalesced','deferred','skipped','cancelled','completed')),
        skip_reason text,
        run_id uuid,
        requested_by_actor_type text,
        requested_by_actor_id text,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX wakeups_queued_idx ON agent_wakeup_requests (created_at) WHERE status = 'queued'`);
    await q.query(`CREATE INDEX wakeups_agent_idx ON agent_wakeup_requests (agent_id, created_at DESC)`);
    await q.query(`CREATE INDEX wakeups_idempotency_idx ON agent_wakeup_requests (agent_id, idempotency_key, created_at DESC) WHERE idempotency_key IS NOT NULL`);
    await q.query(`
      CREATE TABLE heartbeat_runs (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        company_id uuid NOT NULL REFERENCES companies(id) ON DELETE CASCADE,
        agent_id uuid NOT NULL REFERENCES agents(id) ON DELETE CASCADE,
        wakeup_request_id uuid REFERENCES agent_wakeup_requests(id) ON DELETE SET NULL,
        status text NOT NULL DEFAULT 'queued'
          CHECK (status IN ('queued','running','succeeded','failed','cancelled','timed_out')),
        invocation_source text NOT NULL,
        trigger_detail text,
        adapter_type text NOT NULL,
        issue_id uuid,
        context_snapshot jsonb NOT NULL DEFAULT '{}',
        started_at timestamptz,
        finished_at timestamptz,
        exit_code integer,
        error_code text,
        error text,
        usage_json jsonb,
        result_json jsonb,
        log_path text,
        log_bytes bigint NOT NULL DEFAULT 0,
        claimed_by text,
        lease_expires_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX heartbeat_runs_live_idx ON heartbeat_runs (agent_id, status) WHERE status IN ('queued','running')`);
    await q.query(`CREATE INDEX heartbeat_runs_company_idx ON heartbeat_runs (company_id, created_at DESC)`);
    await q.query(`CREATE INDEX heartbeat_runs_issue_idx ON heartbeat_runs (issue_id, created_at DESC) WHERE issue_id IS NOT NULL`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE IF EXISTS heartbeat_runs, agent_wakeup_requests, project_goals, projects, goals, principal_permission_grants, company_memberships,
      budget_policies, agent_api_keys, agents, activity_log, assets, companies CASCADE`);
    await q.query(`DROP FUNCTION IF EXISTS activity_log_immutable()`);
  }
}
