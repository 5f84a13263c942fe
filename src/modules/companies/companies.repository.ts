import { Injectable } from '@nestjs/common';
import { In, Not } from 'typeorm';
import { CompanyScopedRepository } from '../../database/company-scoped.repository';
import { Db } from '../../database/db.service';
import { CompanyEntity } from './company.entity';

export interface CompanyInsert {
  name: string;
  description: string | null;
  issuePrefix: string;
  budgetMonthlyCents: number;
  requireBoardApprovalForNewAgents: boolean;
  brandColor: string | null;
}

export interface CompanyCountsRecord {
  id: string;
  agentCount: number;
  issueCount: number;
}

/** The largest int4: spentMonthlyCents saturates there. */
const MAX_INT4 = 2147483647;

/**
 * The only place the `companies` table is read and written. It is the tenant itself: a statement
 * about one company names it as `id = $1`; listings and new companies span companies (`unscoped`).
 */
@Injectable()
export class CompaniesRepository extends CompanyScopedRepository {
  constructor(db: Db) {
    super(db);
  }

  private get repo() {
    return this.orm(CompanyEntity);
  }

  /** Oldest first; `ids` undefined means every company. */
  async list(includeArchived: boolean, ids: string[] | undefined): Promise<CompanyEntity[]> {
    if (ids && !ids.length) return [];
    return this.unscopedOrm('the companies page: every company the caller may see (ids from its access check)', CompanyEntity).find({
      where: { ...(includeArchived ? {} : { status: Not('archived') }), ...(ids ? { id: In(ids) } : {}) },
      order: { createdAt: 'ASC' },
    });
  }

  /** Agent (non-terminated) and issue counts per company; `ids` null means every company. */
  // reads agents (owned by agents) and issues (owned by issues) for the companies page
  counts(ids: string[] | null): Promise<CompanyCountsRecord[]> {
    return this.unscoped<CompanyCountsRecord>(
      'the companies page: counts of every company the caller may see (ids from its access check)',
      `SELECT c.id,
              (SELECT count(*)::int FROM agents a WHERE a.company_id = c.id AND a.status <> 'terminated') AS "agentCount",
              ${this.issueCountSql()} AS "issueCount"
         FROM companies c
        WHERE ($1::uuid[] IS NULL OR c.id = ANY($1::uuid[]))`,
      [ids],
    );
  }

  /** Issues of the company, hidden ones included. */
  private issueCountSql(): string {
    return `(SELECT count(*)::int FROM issues i WHERE i.company_id = c.id)`;
  }

  findById(companyId: string): Promise<CompanyEntity | null> {
    return this.ormIn(companyId, CompanyEntity, 'id').findOneBy({});
  }

  /** The company row locked for update (until commit). */
  lockById(companyId: string): Promise<CompanyEntity | null> {
    return this.ormIn(companyId, CompanyEntity, 'id').findOne({ where: {}, lock: { mode: 'pessimistic_write' } });
  }

  save(company: CompanyEntity): Promise<CompanyEntity> {
    return this.repo.save(company);
  }

  /** Hard delete (the company's rows go with it through the foreign keys). */
  async delete(companyId: string): Promise<void> {
    await this.rows(companyId, `DELETE FROM companies WHERE id = $1`);
  }

  /** Creates of one prefix base take turns (until commit); other bases are not held up. */
  async lockIssuePrefix(base: string): Promise<void> {
    await this.unscoped(
      'issue prefixes are unique across companies',
      `SELECT pg_advisory_xact_lock(hashtext('company_issue_prefix:' || $1))`,
      [base],
    );
  }

  /** The highest suffix in use for this base (BASE counts as 1, none 0): an index range scan on the prefix. */
  async topPrefixSuffix(base: string): Promise<number> {
    const [{ top }] = await this.unscoped<{ top: number }>(
      'issue prefixes are unique across companies',
      `SELECT COALESCE(MAX(CASE WHEN issue_prefix = $1 THEN 1 ELSE substring(issue_prefix FROM $2::int)::int END), 0)::int AS top
         FROM companies WHERE issue_prefix LIKE $1 || '%' AND issue_prefix ~ ('^' || $1 || '[0-9]*$')`,
      [base, base.length + 1],
    );
    return top;
  }

  /** The new company's id. */
  async insert(c: CompanyInsert): Promise<string> {
    const [row] = await this.unscoped<{ id: string }>(
      'a new company: it has no id to scope by yet',
      `INSERT INTO companies (name, description, issue_prefix, budget_monthly_cents, require_board_approval_for_new_agents, brand_color)
       VALUES ($1, $2, $3, $4, $5, $6) RETURNING id`,
      [c.name, c.description, c.issuePrefix, c.budgetMonthlyCents, c.requireBoardApprovalForNewAgents, c.brandColor],
    );
    return row.id;
  }

  // ---- budgets (BudgetScopeOwners: the budgets module asks through the port this module registers)

  /** Pauses an active company with reason `budget` (other pause reasons stay). */
  async pauseForBudget(companyId: string): Promise<void> {
    await this.rows(
      companyId,
      `UPDATE companies SET status = 'paused', pause_reason = 'budget', updated_at = now() WHERE id = $1 AND status = 'active'`,
    );
  }

  /** Resumes a company its budget paused; true when it did. */
  async resumeFromBudget(companyId: string): Promise<boolean> {
    const rows = await this.rows(
      companyId,
      `WITH u AS (UPDATE companies SET status = 'active', pause_reason = NULL, updated_at = now()
          WHERE id = $1 AND status = 'paused' AND pause_reason = 'budget' RETURNING id) SELECT * FROM u`,
    );
    return rows.length > 0;
  }

  /** Sets budgetMonthlyCents; the company's spentMonthlyCents, or null when there is no such company. */
  setMonthlyBudget(companyId: string, cents: number): Promise<{ spentMonthlyCents: number } | null> {
    return this.row<{ spentMonthlyCents: number }>(
      companyId,
      `WITH u AS (UPDATE companies SET budget_monthly_cents = $2, updated_at = now() WHERE id = $1 RETURNING spent_monthly_cents) SELECT spent_monthly_cents AS "spentMonthlyCents" FROM u`,
      [cents],
    );
  }

  /**
   * spentMonthlyCents becomes the company's running total of the calendar month starting at `month`
   * (reads budgets' cost_usage). Sent at once, without an await before it: a cost event sends it in
   * its pipeline, right after its accumulation.
   */
  syncMonthlySpend(companyId: string, month: Date): Promise<void> {
    return this.rows(
      companyId,
      `UPDATE companies c SET spent_monthly_cents = x.cents, updated_at = now()
         FROM (SELECT LEAST(COALESCE((SELECT u.billed_cents FROM cost_usage u
                                      WHERE u.company_id = $1 AND u.scope_type = 'company' AND u.scope_id = $1
                                        AND u.window_kind = 'calendar_month_utc' AND u.window_start = $2), 0), ${MAX_INT4})::int AS cents) x
        WHERE c.id = $1 AND c.spent_monthly_cents IS DISTINCT FROM x.cents`,
      [month],
    ).then(() => undefined);
  }

  /** Locks the company row until commit (FOR NO KEY UPDATE: budget changes of a company run one at a time). */
  async lockForBudget(companyId: string): Promise<void> {
    await this.rows(companyId, `SELECT 1 FROM companies WHERE id = $1 FOR NO KEY UPDATE`);
  }

  budget(
    companyId: string,
  ): Promise<{ budgetMonthlyCents: number; spentMonthlyCents: number; status: string; pauseReason: string | null } | null> {
    return this.row(
      companyId,
      `SELECT budget_monthly_cents AS "budgetMonthlyCents", spent_monthly_cents AS "spentMonthlyCents", status, pause_reason AS "pauseReason"
         FROM companies WHERE id = $1`,
    );
  }
}
