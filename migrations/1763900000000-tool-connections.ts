import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Company tool connections (MCP servers) and their governance, owned by the tools module:
 * applications group connections; a connection is remote (an MCP URL reached through the service's
 * gateway, its credentials kept as company secret references) or local (a command the agent's CLI
 * runs under the agent's own identity); the catalog holds the tools a remote connection lists;
 * profiles give per-tool policies (allow, ask, deny) and are bound to the company or to agents;
 * action requests are the calls of "ask" tools waiting for the board (expiry decided by now()).
 */
export class ToolConnections1763900000000 implements MigrationInterface {
  name = 'ToolConnections1763900000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE tool_applications (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        company_id uuid NOT NULL REFERENCES companies(id) ON DELETE CASCADE,
        application_key text NOT NULL,
        name text NOT NULL,
        description text,
        type text NOT NULL,
        status text NOT NULL DEFAULT 'active',
        metadata jsonb NOT NULL DEFAULT '{}',
        archived_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        UNIQUE (company_id, application_key)
      )`);
    await q.query(`
      CREATE TABLE tool_connections (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        company_id uuid NOT NULL REFERENCES companies(id) ON DELETE CASCADE,
        application_id uuid NOT NULL REFERENCES tool_applications(id) ON DELETE CASCADE,
        name text NOT NULL,
        tool_prefix text NOT NULL,
        transport text NOT NULL CHECK (transport IN ('mcp_remote', 'local_stdio')),
        auth_kind text NOT NULL DEFAULT 'none',
        status text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'disabled', 'archived')),
        transport_config jsonb NOT NULL DEFAULT '{}',
        credential_refs jsonb NOT NULL DEFAULT '[]',
        gallery_key text,
        approval_timeout_sec integer NOT NULL DEFAULT 3600 CHECK (approval_timeout_sec > 0),
        health_status text NOT NULL DEFAULT 'unchecked',
        health_message text,
        health_checked_at timestamptz,
        last_catalog_refresh_at timestamptz,
        last_used_at timestamptz,
        created_by_agent_id uuid,
        created_by_user_id text,
        archived_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE UNIQUE INDEX tool_connections_prefix ON tool_connections (company_id, tool_prefix) WHERE archived_at IS NULL`);
    await q.query(`CREATE INDEX tool_connections_company ON tool_connections (company_id, created_at)`);
    await q.query(`
      CREATE TABLE tool_catalog_entries (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        company_id uuid NOT NULL REFERENCES companies(id) ON DELETE CASCADE,
        connection_id uuid NOT NULL REFERENCES tool_connections(id) ON DELETE CASCADE,
        tool_name text NOT NULL,
        title text,
        description text,
        input_schema jsonb,
        annotations jsonb,
        status text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'removed')),
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        UNIQUE (connection_id, tool_name)
      )`);
    await q.query(`
      CREATE TABLE tool_profiles (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        company_id uuid NOT NULL REFERENCES companies(id) ON DELETE CASCADE,
        profile_key text NOT NULL,
        name text NOT NULL,
        description text,
        status text NOT NULL DEFAULT 'active' CHECK (status IN ('draft', 'active', 'disabled', 'archived')),
        default_action text NOT NULL DEFAULT 'deny' CHECK (default_action IN ('deny', 'allow')),
        metadata jsonb NOT NULL DEFAULT '{}',
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        UNIQUE (company_id, profile_key)
      )`);
    await q.query(`
      CREATE TABLE tool_profile_entries (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        company_id uuid NOT NULL REFERENCES companies(id) ON DELETE CASCADE,
        profile_id uuid NOT NULL REFERENCES tool_profiles(id) ON DELETE CASCADE,
        selector_type text NOT NULL CHECK (selector_type IN ('application', 'connection', 'catalog_entry', 'tool_name')),
        policy text NOT NULL CHECK (policy IN ('allow', 'ask', 'deny')),
        application_id uuid REFERENCES tool_applications(id) ON DELETE CASCADE,
        connection_id uuid REFERENCES tool_connections(id) ON DELETE CASCADE,
        catalog_entry_id uuid REFERENCES tool_catalog_entries(id) ON DELETE CASCADE,
        tool_name text,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX tool_profile_entries_profile ON tool_profile_entries (profile_id)`);
    await q.query(`
      CREATE TABLE tool_profile_bindings (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        company_id uuid NOT NULL REFERENCES companies(id) ON DELETE CASCADE,
        profile_id uuid NOT NULL REFERENCES tool_profiles(id) ON DELETE CASCADE,
        target_type text NOT NULL CHECK (target_type IN ('company', 'agent')),
        target_id text NOT NULL,
        priority integer NOT NULL DEFAULT 100,
        created_by_agent_id uuid,
        created_by_user_id text,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        UNIQUE (profile_id, target_type, target_id)
      )`);
    await q.query(`CREATE INDEX tool_profile_bindings_target ON tool_profile_bindings (company_id, target_type, target_id)`);
    await q.query(`
      CREATE TABLE tool_action_requests (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        company_id uuid NOT NULL REFERENCES companies(id) ON DELETE CASCADE,
        agent_id uuid NOT NULL,
        run_id uuid,
        connection_id uuid NOT NULL REFERENCES tool_connections(id) ON DELETE CASCADE,
        tool_name text NOT NULL,
        arguments jsonb NOT NULL DEFAULT '{}',
        arguments_digest text NOT NULL,
        status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'approved', 'rejected', 'executed', 'failed')),
        decision_reason text,
        decided_by_user_id text,
        decided_at timestamptz,
        expires_at timestamptz NOT NULL,
        executed_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX tool_action_requests_company ON tool_action_requests (company_id, status, created_at DESC)`);
    await q.query(`CREATE INDEX tool_action_requests_call ON tool_action_requests (company_id, agent_id, connection_id, tool_name, arguments_digest)`);
  }

  async down(q: QueryRunner): Promise<void> {
    for (const t of [
      'tool_action_requests',
      'tool_profile_bindings',
      'tool_profile_entries',
      'tool_profiles',
      'tool_catalog_entries',
      'tool_connections',
      'tool_applications',
    ])
      await q.query(`DROP TABLE IF EXISTS ${t}`);
  }
}
