import { Injectable, OnModuleInit } from '@nestjs/common';
import { HiredAgents } from '../approvals/hired-agents.port';
import { BudgetScopeOwners } from '../budgets/budget-scope-owners';
import { AgentScopesRepository } from './agent-scopes.repository';

/**
 * The agents module's part of the ports lower modules declare: budgets (pause, resume, budget and
 * spend of agent scopes) and approvals (what a hire decision does to the hired agent). Registered
 * at start-up, so those modules change agents rows only through this module.
 */
@Injectable()
export class AgentScopeOwners implements OnModuleInit {
  constructor(
    private readonly repo: AgentScopesRepository,
    private readonly budgets: BudgetScopeOwners,
    private readonly hired: HiredAgents,
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
    this.hired.register({
      activate: (companyId, agentId) => repo.activateHired(companyId, agentId),
      terminate: async (companyId, agentId) => {
        if (!(await repo.terminateHired(companyId, agentId))) return false;
        await repo.revokeKeys(companyId, agentId);
        return true;
      },
    });
  }
}
