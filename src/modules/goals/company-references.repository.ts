import type { Db } from '../../database/db.service';

/**
 * The statements behind the company reference checks of `company-references.ts` (used by the
 * RefersTo validation of several modules): they take the caller's `Db` so that they run in its
 * transaction.
 */

/** Whether the agent is a live (not terminated) agent of the company. */
export async function agentOfCompanyExists(db: Db, companyId: string, agentId: string): Promise<boolean> {
  // reads agents (owned by agents)
  const rows = await db.query(`SELECT 1 FROM agents WHERE id = $1 AND company_id = $2 AND status <> 'terminated'`, [agentId, companyId]);
  return rows.length > 0;
}

/** The ids among `goalIds` that are goals of the company. */
export async function goalIdsOfCompany(db: Db, companyId: string, goalIds: string[]): Promise<string[]> {
  const rows = await db.query<{ id: string }>(`SELECT id FROM goals WHERE company_id = $1 AND id = ANY($2::uuid[])`, [companyId, goalIds]);
  return rows.map((r) => r.id);
}

/** Serialises structural changes of one company's goal tree (cycles, the default flag) across instances. */
export async function lockCompanyGoals(db: Db, companyId: string): Promise<void> {
  await db.query(`SELECT pg_advisory_xact_lock(hashtext('goals:' || $1::text))`, [companyId]);
}
