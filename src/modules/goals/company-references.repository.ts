import { Injectable } from '@nestjs/common';
import { CompanyScopedRepository } from '../../database/company-scoped.repository';
import { Db } from '../../database/db.service';

/**
 * The statements behind the company reference checks of `company-references.ts` (used by the
 * RefersTo validation of goals and projects); they run in the caller's transaction.
 */
@Injectable()
export class CompanyReferencesRepository extends CompanyScopedRepository {
  constructor(db: Db) {
    super(db);
  }

  /** Whether the agent is a live (not terminated) agent of the company (reads agents, owned by agents). */
  async agentOfCompanyExists(companyId: string, agentId: string): Promise<boolean> {
    const rows = await this.rows(companyId, `SELECT 1 FROM agents WHERE company_id = $1 AND id = $2 AND status <> 'terminated'`, [agentId]);
    return rows.length > 0;
  }

  /** The ids among `goalIds` that are goals of the company. */
  async goalIdsOfCompany(companyId: string, goalIds: string[]): Promise<string[]> {
    const rows = await this.rows<{ id: string }>(companyId, `SELECT id FROM goals WHERE company_id = $1 AND id = ANY($2::uuid[])`, [
      goalIds,
    ]);
    return rows.map((r) => r.id);
  }

  /** Serialises structural changes of one company's goal tree (cycles, the default flag) across instances. */
  async lockCompanyGoals(companyId: string): Promise<void> {
    await this.rows(companyId, `SELECT pg_advisory_xact_lock(hashtext('goals:' || $1::text))`);
  }
}
