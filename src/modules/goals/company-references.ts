import { unprocessable } from '../../common/errors/domain-error';
import type { Db } from '../../database/db.service';

/** Ids a record points at must belong to the record's company: 422 otherwise (like a foreign logo asset). */
export async function assertAgentOfCompany(db: Db, companyId: string, agentId: string, field: string): Promise<void> {
  const rows = await db.query(`SELECT 1 FROM agents WHERE id = $1 AND company_id = $2 AND status <> 'terminated'`, [agentId, companyId]);
  if (!rows.length) throw unprocessable(`${field} must reference an agent of this company`, 'invalid_reference', { field });
}

/** The given goal ids, all of the company, de-duplicated in order; 422 names the first foreign or unknown one. */
export async function assertGoalsOfCompany(db: Db, companyId: string, goalIds: string[], field: string): Promise<string[]> {
  const unique = [...new Set(goalIds)];
  if (!unique.length) return unique;
  const rows = await db.query<{ id: string }>(`SELECT id FROM goals WHERE company_id = $1 AND id = ANY($2::uuid[])`, [companyId, unique]);
  const found = new Set(rows.map((r) => r.id));
  const missing = unique.find((id) => !found.has(id));
  if (missing) throw unprocessable(`${field} must reference goals of this company (${missing} is not)`, 'invalid_reference', { field });
  return unique;
}

/** Serialises structural changes of one company's goal tree (cycles, the default flag) across instances. */
export async function lockCompanyGoals(db: Db, companyId: string): Promise<void> {
  await db.query(`SELECT pg_advisory_xact_lock(hashtext('goals:' || $1::text))`, [companyId]);
}
