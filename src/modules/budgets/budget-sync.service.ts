import { Injectable } from '@nestjs/common';
import { BudgetScopeType } from './budget-policy.entity';
import { BudgetScopeOwners } from './budget-scope-owners.port';
import { BudgetsRepository } from './budgets.repository';

/**
 * Keeps the monthly billed-cents policy of a scope in step with its `budgetMonthlyCents`
 * (company and agent). A zero budget deactivates the policy rather than deleting its history.
 */
@Injectable()
export class BudgetSyncService {
  constructor(
    private readonly repo: BudgetsRepository,
    private readonly owners: BudgetScopeOwners,
  ) {}

  async syncMonthlyPolicy(companyId: string, scopeType: BudgetScopeType, scopeId: string, amountCents: number): Promise<void> {
    if (amountCents <= 0) {
      await this.repo.deactivateMonthlyPolicy(companyId, scopeType, scopeId);
      return;
    }
    await this.repo.upsertMonthlyPolicy(companyId, scopeType, scopeId, amountCents);
  }

  /**
   * The other direction: when a policy changes through the budgets API (upsert, raise on resolve) and it
   * is the monthly billed_cents policy of a company or agent, budgetMonthlyCents follows it.
   */
  async mirrorPolicyAmount(
    companyId: string,
    policy: { scopeType: BudgetScopeType; scopeId: string; metric: string; windowKind: string },
    cents: number,
  ): Promise<void> {
    if (policy.metric !== 'billed_cents' || policy.windowKind !== 'calendar_month_utc' || policy.scopeType === 'project') return;
    if (policy.scopeType === 'company') await this.owners.company.setMonthlyBudget(companyId, cents);
    else await this.owners.agents.setMonthlyBudget(companyId, policy.scopeId, cents);
  }
}
