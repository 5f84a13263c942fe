import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Every agent that is not terminated is an active member of its company (created or hired agents
 * get the membership row from now on; this backfills the ones created before).
 */
export class AgentMemberships1763724000000 implements MigrationInterface {
  name = 'AgentMemberships1763724000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      INSERT INTO company_memberships (company_id, principal_type, principal_id, membership_role, status)
      SELECT a.company_id, 'agent', a.id::text, 'member', 'active'
        FROM agents a
       WHERE a.status <> 'terminated'
      ON CONFLICT (company_id, principal_type, principal_id) DO NOTHING`);
  }

  async down(): Promise<void> {
    // the rows are ordinary memberships now; nothing to undo
  }
}
