import { Injectable } from '@nestjs/common';
import { CompanyScopedRepository } from '../../database/company-scoped.repository';
import { Db } from '../../database/db.service';

/**
 * What the engine checks before a wake becomes a run, on tables other modules own: the company's
 * status and monthly budget (companies) and the agent's open assigned issues (issues). Reads only,
 * each in the agent's company (see FOREIGN_READS in src/database/table-owners.ts).
 */
@Injectable()
export class RunGatesRepository extends CompanyScopedRepository {
  constructor(db: Db) {
    super(db);
  }

  /** The company's status and whether it is over its monthly budget (null if it is gone). */
  // reads companies (owned by companies)
  companyRunGate(companyId: string): Promise<{ status: string; over: boolean } | null> {
    return this.row<{ status: string; over: boolean }>(
      companyId,
      `SELECT status, budget_monthly_cents > 0 AND spent_monthly_cents >= budget_monthly_cents AS over FROM companies WHERE id = $1`,
    );
  }

  /** Whether the issues table exists (the engine runs without the issues module in some set-ups). */
  async issuesTableExists(): Promise<boolean> {
    const t = await this.unscopedRow<{ exists: boolean }>(
      'a catalog check (whether a table exists): no row of any company is read',
      `SELECT to_regclass('public.issues') IS NOT NULL AS exists`,
    );
    return !!t?.exists;
  }

  /** Whether the agent has an assigned todo/in_progress issue. */
  // reads issues (owned by issues)
  async hasOpenAssignedIssue(companyId: string, agentId: string): Promise<boolean> {
    const rows = await this.rows(
      companyId,
      `SELECT 1 FROM issues i WHERE i.company_id = $1 AND to_jsonb(i)->>'assignee_agent_id' = $2
          AND to_jsonb(i)->>'status' IN ('todo','in_progress') LIMIT 1`,
      [agentId],
    );
    return rows.length > 0;
  }
}
