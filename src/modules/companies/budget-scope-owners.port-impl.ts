import { Injectable, OnModuleInit } from '@nestjs/common';
import { BudgetScopeOwners } from '../budgets/budget-scope-owners.port';
import { CompaniesRepository } from './companies.repository';

/** The companies module's part of the budgets port: pause, resume, budget and spend of a company scope. */
@Injectable()
export class CompanyBudgetOwner implements OnModuleInit {
  constructor(
    private readonly repo: CompaniesRepository,
    private readonly owners: BudgetScopeOwners,
  ) {}

  onModuleInit(): void {
    const repo = this.repo;
    this.owners.registerCompanies({
      pause: (companyId) => repo.pauseForBudget(companyId),
      resume: (companyId) => repo.resumeFromBudget(companyId),
      setMonthlyBudget: async (companyId, cents) => {
        const row = await repo.setMonthlyBudget(companyId, cents);
        return row ? { spentMonthlyCents: row.spentMonthlyCents } : null;
      },
      syncMonthlySpend: (companyId, month) => repo.syncMonthlySpend(companyId, month),
      lock: (companyId) => repo.lockForBudget(companyId),
      budget: async (companyId) => {
        const row = await repo.budget(companyId);
        return row
          ? {
              budgetMonthlyCents: row.budgetMonthlyCents,
              spentMonthlyCents: row.spentMonthlyCents,
              status: row.status,
              pauseReason: row.pauseReason,
            }
          : null;
      },
    });
  }
}
