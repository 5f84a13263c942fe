import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Agents: hire sources on the agent, the approvals table (hire approvals hold the requested
 * configuration snapshot), and the indexes the roster, shortname lookup and grant reads need.
 */
export class Agents1763700200000 implements MigrationInterface {
  name = 'Agents1763700200000';

  async up(q: QueryRunner): Promise<void> {
    // issues that led to the hire (issues arrive later: no foreign key)
    await q.query(`ALTER TABLE agents ADD COLUMN source_issue_ids jsonb NOT NULL DEFAULT '[]'`);
    // shortname lookups also reach terminated agents (newest first)
    await q.query(`CREATE INDEX agents_company_url_key_idx ON agents (company_id, url_key, created_at DESC)`);
    await q.query(`CREATE INDEX agents_company_created_idx ON agents (company_id, created_at)`);

    await q.query(`
      CREATE TABLE approvals (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        company_id uuid NOT NULL REFERENCES companies(id) ON DELETE CASCADE,
        type text NOT NULL CHECK (type IN ('hire_agent')),
        status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending','approved','rejected','cancelled')),
        agent_id uuid REFERENCES agents(id) ON DELETE SET NULL,
        payload jsonb NOT NULL DEFAULT '{}',
        source_issue_ids jsonb NOT NULL DEFAULT '[]',
        requested_by_actor_type text NOT NULL CHECK (requested_by_actor_type IN ('user','agent','system')),
        requested_by_actor_id text NOT NULL,
        decision_note text,
        decided_by_user_id text,
        decided_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX approvals_company_status_idx ON approvals (company_id, status, created_at DESC)`);
    await q.query(`CREATE INDEX approvals_agent_idx ON approvals (agent_id) WHERE agent_id IS NOT NULL`);
    // one pending hire approval per agent
    await q.query(`CREATE UNIQUE INDEX approvals_pending_hire_key ON approvals (agent_id) WHERE status = 'pending' AND type = 'hire_agent'`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE IF EXISTS approvals`);
    await q.query(`DROP INDEX IF EXISTS agents_company_created_idx`);
    await q.query(`DROP INDEX IF EXISTS agents_company_url_key_idx`);
    await q.query(`ALTER TABLE agents DROP COLUMN IF EXISTS source_issue_ids`);
  }
}
