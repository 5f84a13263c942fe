import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Built-in agents and suggested changes: at most one live agent per company and registry key
 * (concurrent provisions cannot both create one), and approvals for suggested changes (an agent
 * configuration change or a skill change, applied when the board approves).
 */
export class BuiltInAgents1763720000001 implements MigrationInterface {
  name = 'BuiltInAgents1763720000001';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE UNIQUE INDEX agents_built_in_key ON agents (company_id, (metadata -> 'serviceBuiltInAgent' ->> 'key'))
       WHERE status <> 'terminated' AND metadata ? 'serviceBuiltInAgent'`);
    await q.query(`ALTER TABLE approvals DROP CONSTRAINT IF EXISTS approvals_type_check`);
    await q.query(`ALTER TABLE approvals ADD CONSTRAINT approvals_type_check CHECK (type IN ('hire_agent','agent_config_change','skill_change'))`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE approvals DROP CONSTRAINT IF EXISTS approvals_type_check`);
    await q.query(`ALTER TABLE approvals ADD CONSTRAINT approvals_type_check CHECK (type IN ('hire_agent'))`);
    await q.query(`DROP INDEX IF EXISTS agents_built_in_key`);
  }
}
