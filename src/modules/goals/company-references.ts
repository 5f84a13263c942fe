import type { Db } from '../../database/db.service';
import { agentOfCompanyExists, goalIdsOfCompany } from './company-references.repository';
import { goalError } from './goals.errors';

export { lockCompanyGoals } from './company-references.repository';

/** Ids a record points at must belong to the record's company: 422 otherwise (like a foreign logo asset). */
export async function assertAgentOfCompany(db: Db, companyId: string, agentId: string, field: string): Promise<void> {
  if (!(await agentOfCompanyExists(db, companyId, agentId)))
    throw goalError('invalid_reference', `${field} must reference an agent of this company`, { field });
}

/** The given goal ids, all of the company, de-duplicated in order; 422 names the first foreign or unknown one. */
export async function assertGoalsOfCompany(db: Db, companyId: string, goalIds: string[], field: string): Promise<string[]> {
  const unique = [...new Set(goalIds)];
  if (!unique.length) return unique;
  const found = new Set(await goalIdsOfCompany(db, companyId, unique));
  const missing = unique.find((id) => !found.has(id));
  if (missing) throw goalError('invalid_reference', `${field} must reference goals of this company (${missing} is not)`, { field });
  return unique;
}
