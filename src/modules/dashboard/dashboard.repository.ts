import { Injectable } from '@nestjs/common';
import { CompanyScopedRepository } from '../../database/company-scoped.repository';
import { Db } from '../../database/db.service';

export interface DashboardCountsRecord {
  agents: Record<string, number> | null;
  issues: Record<string, number> | null;
  spentMonthlyCents: number;
  budgetMonthlyCents: number;
  pendingApprovals: number;
  activeIncidents: number;
  pausedProjects: number;
}

export interface RunGroupRecord {
  day: string;
  status: string;
  errorCode: string | null;
  n: number;
}

/**
 * The company dashboard's counts in one statement. This read joins several domains (agents,
 * issues, companies, approvals, budgets, projects, heartbeat runs) for speed; it lives here, in the
 * owner of the page it serves, and only reads. Each part is an indexed count: agents and issues
 * by (company, status); the run activity is an index-only scan of heartbeat_runs_company_created_idx
 * over a time range, grouped by day, status and error code.
 */
@Injectable()
export class DashboardRepository extends CompanyScopedRepository {
  constructor(db: Db) {
    super(db);
  }

  counts(companyId: string): Promise<DashboardCountsRecord | null> {
    return this.row(
      companyId,
      `SELECT
         (SELECT json_object_agg(s.status, s.n) FROM (SELECT status, count(*)::int AS n FROM agents WHERE company_id = $1 GROUP BY status) s) AS agents,
         (SELECT json_object_agg(s.status, s.n) FROM (SELECT status, count(*)::int AS n FROM issues WHERE company_id = $1 AND hidden_at IS NULL GROUP BY status) s) AS issues,
         c.spent_monthly_cents AS "spentMonthlyCents", c.budget_monthly_cents AS "budgetMonthlyCents",
         (SELECT count(*)::int FROM approvals WHERE company_id = $1 AND status = 'pending') AS "pendingApprovals",
         (SELECT count(*)::int FROM budget_incidents WHERE company_id = $1 AND (status = 'open' OR hold_active)) AS "activeIncidents",
         (SELECT count(*)::int FROM projects WHERE company_id = $1 AND paused_at IS NOT NULL) AS "pausedProjects"
       FROM companies c WHERE c.id = $1`,
      [],
    );
  }

  /** Runs created in [from, to) by UTC day, status and error code: an index-only range scan of heartbeat_runs_company_created_idx. */
  runGroups(companyId: string, from: Date, to: Date): Promise<RunGroupRecord[]> {
    return this.rows<RunGroupRecord>(
      companyId,
      `SELECT to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day, status, error_code AS "errorCode", count(*)::int AS n
         FROM heartbeat_runs WHERE company_id = $1 AND created_at >= $2 AND created_at < $3
        GROUP BY 1, 2, 3`,
      [from, to],
    );
  }
}
