import { Injectable } from '@nestjs/common';
import { Db } from '../../database/db.service';
import { BudgetScopeType } from './budget-policy.entity';

/**
 * Keeps the monthly billed-cents policy of a scope in step with its `budgetMonthlyCents`
 * (company and agent). A zero budget deactivates the policy rather than deleting its history.
 */
@Injectable()
export class BudgetSyncService {
  constructor(private readonly db: Db) {}

  async syncMonthlyPolicy(companyId: string, scopeType: BudgetScopeType, scopeId: string, amountCents: number): Promise<void> {
    if (amountCents <= 0) {
      await this.db.query(
        `UPDATE budget_policies SET is_active = false, amount = 0, updated_at = now()
          WHERE company_id = $1 AND scope_type = $2 AND scope_id = $3 AND metric = 'billed_cents' AND window_kind = 'calendar_month_utc'`,
        [companyId, scopeType, scopeId],
      );
      return;
    }
    await this.db.query(
      `INSERT INTO budget_policies (company_id, scope_type, scope_id, metric, window_kind, amount)
       VALUES ($1, $2, $3, 'billed_cents', 'calendar_month_utc', $4)
       ON CONFLICT (company_id, scope_type, scope_id, metric, window_kind)
       DO UPDATE SET amount = EXCLUDED.amount, is_active = true, updated_at = now()`,
      [companyId, scopeType, scopeId, amountCents],
    );
  }

  /**
   * The other direction: when a policy changes through the budgets API (upsert, raise on resolve) and it
   * is the monthly billed_cents policy of a company or agent, budgetMonthlyCents follows it.
   */
  async mirrorPolicyAmount(
    policy: { scopeType: BudgetScopeType; scopeId: string; metric: string; windowKind: string },
    cents: number,
  ): Promise<void> {
    if (policy.metric !== 'billed_cents' || policy.windowKind !== 'calendar_month_utc' || policy.scopeType === 'project') return;
    const table = policy.scopeType === 'company' ? 'companies' : 'agents';
    await this.db.query(`UPDATE ${table} SET budget_monthly_cents = $2, updated_at = now() WHERE id = $1`, [policy.scopeId, cents]);
  }
}
