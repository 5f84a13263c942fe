import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Goals (company default), projects (unique shortnames), project workspaces with their runtime
 * services, and the per-user curation tables: resource memberships, sidebar preferences and
 * inbox dismissals.
 */
export class Projects1763700300000 implements MigrationInterface {
  name = 'Projects1763700300000';

  async up(q: QueryRunner): Promise<void> {
    // the company default goal (issue goal precedence): at most one flagged goal per company
    await q.query(`ALTER TABLE goals ADD COLUMN is_company_default boolean NOT NULL DEFAULT false`);
    await q.query(`CREATE UNIQUE INDEX goals_company_default_key ON goals (company_id) WHERE is_company_default`);
    await q.query(`CREATE INDEX goals_parent_idx ON goals (parent_id) WHERE parent_id IS NOT NULL`);

    // shortname references (`GET /api/projects/<urlKey>`) are unique per company
    await q.query(`DROP INDEX IF EXISTS projects_url_key_idx`);
    await q.query(`CREATE UNIQUE INDEX projects_company_url_key ON projects (company_id, url_key)`);
    await q.query(`CREATE INDEX projects_url_key_idx ON projects (url_key)`);
    await q.query(`CREATE INDEX project_goals_goal_idx ON project_goals (goal_id)`);

    await q.query(`
      CREATE TABLE project_workspaces (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        company_id uuid NOT NULL REFERENCES companies(id) ON DELETE CASCADE,
        project_id uuid NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
        name text NOT NULL,
        source_type text NOT NULL DEFAULT 'local_path'
          CHECK (source_type IN ('local_path','git_repo','remote_managed','non_git_path')),
        cwd text,
        repo_url text,
        repo_ref text,
        default_ref text,
        visibility text,
        setup_command text,
        cleanup_command text,
        remote_provider text,
        remote_workspace_ref text,
        shared_workspace_key text,
        metadata jsonb NOT NULL DEFAULT '{}',
        runtime_config jsonb,
        is_primary boolean NOT NULL DEFAULT false,
        desired_state text NOT NULL DEFAULT 'stopped' CHECK (desired_state IN ('running','stopped')),
        -- the instance that owns the runtime process (only it may signal or reconcile it)
        runtime_owner_id text,
        runtime_pid integer,
        runtime_started_at timestamptz,
        runtime_exit_code integer,
        runtime_exited_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        CHECK (cwd IS NOT NULL OR repo_url IS NOT NULL OR (source_type = 'remote_managed' AND remote_workspace_ref IS NOT NULL))
      )`);
    // exactly one primary per project (moves happen in one transaction under the project row lock)
    await q.query(`CREATE UNIQUE INDEX project_workspaces_one_primary ON project_workspaces (project_id) WHERE is_primary`);
    await q.query(`CREATE INDEX project_workspaces_project_idx ON project_workspaces (project_id, created_at)`);
    await q.query(`CREATE INDEX project_workspaces_runtime_owner_idx ON project_workspaces (runtime_owner_id) WHERE runtime_owner_id IS NOT NULL`);

    await q.query(`
      CREATE TABLE runtime_service_operations (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        company_id uuid NOT NULL REFERENCES companies(id) ON DELETE CASCADE,
        project_id uuid NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
        workspace_id uuid NOT NULL REFERENCES project_workspaces(id) ON DELETE CASCADE,
        action text NOT NULL CHECK (action IN ('start','stop','restart','reconcile')),
        status text NOT NULL CHECK (status IN ('succeeded','failed')),
        pid integer,
        instance_id text NOT NULL,
        log_path text,
        error text,
        requested_by_actor_type text,
        requested_by_actor_id text,
        started_at timestamptz NOT NULL,
        finished_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX runtime_service_operations_ws_idx ON runtime_service_operations (workspace_id, created_at DESC)`);

    await q.query(`
      CREATE TABLE resource_memberships (
        company_id uuid NOT NULL REFERENCES companies(id) ON DELETE CASCADE,
        user_id text NOT NULL,
        resource_type text NOT NULL CHECK (resource_type IN ('project','agent')),
        resource_id uuid NOT NULL,
        state text NOT NULL CHECK (state IN ('joined','left')),
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (company_id, user_id, resource_type, resource_id)
      )`);
    await q.query(`CREATE INDEX resource_memberships_resource_idx ON resource_memberships (resource_type, resource_id)`);

    await q.query(`
      CREATE TABLE sidebar_preferences (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        user_id text NOT NULL,
        company_id uuid REFERENCES companies(id) ON DELETE CASCADE,
        preferences jsonb NOT NULL DEFAULT '{}',
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE UNIQUE INDEX sidebar_preferences_global_key ON sidebar_preferences (user_id) WHERE company_id IS NULL`);
    await q.query(`CREATE UNIQUE INDEX sidebar_preferences_company_key ON sidebar_preferences (user_id, company_id) WHERE company_id IS NOT NULL`);

    await q.query(`
      CREATE TABLE inbox_dismissals (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        company_id uuid NOT NULL REFERENCES companies(id) ON DELETE CASCADE,
        user_id text NOT NULL,
        item_key text NOT NULL CHECK (item_key ~ '^(approval|join|run|attention):.+'),
        kind text NOT NULL CHECK (kind IN ('dismiss','snooze')),
        snoozed_until timestamptz,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        CHECK ((kind = 'snooze') = (snoozed_until IS NOT NULL))
      )`);
    await q.query(`CREATE UNIQUE INDEX inbox_dismissals_item_key ON inbox_dismissals (company_id, user_id, item_key)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE IF EXISTS inbox_dismissals, sidebar_preferences, resource_memberships, runtime_service_operations, project_workspaces`);
    await q.query(`DROP INDEX IF EXISTS project_goals_goal_idx`);
    await q.query(`DROP INDEX IF EXISTS projects_url_key_idx`);
    await q.query(`DROP INDEX IF EXISTS projects_company_url_key`);
    await q.query(`CREATE INDEX projects_url_key_idx ON projects (company_id, url_key)`);
    await q.query(`DROP INDEX IF EXISTS goals_parent_idx`);
    await q.query(`DROP INDEX IF EXISTS goals_company_default_key`);
    await q.query(`ALTER TABLE goals DROP COLUMN IF EXISTS is_company_default`);
  }
}
