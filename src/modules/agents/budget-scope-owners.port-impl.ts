import { Injectable, OnModuleInit } from '@nestjs/common';
import { BudgetScopeOwners } from '../budgets/budget-scope-owners.port';
import { AgentScopesRepository } from './agent-scopes.repository';

/** The agents module's part of the budgets port: pause, resume, budget and spend of agent scopes. */
@Injectable()
export class AgentBudgetScopes implements OnModuleInit {
  constructor(
    private readonly repo: AgentScopesRepository,
    private readonly budgets: BudgetScopeOwners,
  ) {}

  onModuleInit(): void {
    const repo = this.repo;
    this.budgets.registerAgents({
      pause: (companyId, agentId) => repo.pause(companyId, agentId, 'budget'),
      pauseAll: (companyId) => repo.pauseAll(companyId, 'budget'),
      resume: (companyId, agentId) => repo.resume(companyId, agentId, 'budget'),
      resumeAll: (companyId, stillHeld) => repo.resumeAll(companyId, 'budget', stillHeld),
      setMonthlyBudget: (companyId, agentId, cents) => repo.setMonthlyBudget(companyId, agentId, cents),
      syncMonthlySpend: (companyId, month, agentId) => repo.syncMonthlySpend(companyId, month, agentId),
    });
  }
}
