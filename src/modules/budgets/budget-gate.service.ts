import { Injectable } from '@nestjs/common';
import { BudgetUsageService } from './budget-usage.service';
import { BudgetIncidentsRepository } from './budget-incidents.repository';
import type { ScopeRef } from './budgets.repository';

export interface BudgetGateDecision {
  allowed: boolean;
  reason?: 'budget';
  /** the policies over their hard limit or the scopes held by a hard incident */
  blockedBy?: Array<{ scopeType: string; scopeId: string; policyId: string }>;
}

/**
 * The heartbeat engine asks before it claims a run: a run never starts while the company, the agent
 * or the run's project is held by a hard budget incident, or is at or over the amount of an active
 * hard-stop policy (including run_count policies: the run about to start would exceed the count).
 */
@Injectable()
export class BudgetGate {
  constructor(
    private readonly repo: BudgetIncidentsRepository,
    private readonly usage: BudgetUsageService,
  ) {}

  async checkBeforeRun(companyId: string, agentId: string, projectId?: string | null): Promise<BudgetGateDecision> {
    const scopes: ScopeRef[] = [
      { scopeType: 'company', scopeId: companyId },
      { scopeType: 'agent', scopeId: agentId },
      ...(projectId ? [{ scopeType: 'project' as const, scopeId: projectId }] : []),
    ];
    const holds = await this.repo.holdsOn(companyId, scopes);
    const blockedBy = holds.map((h) => ({ scopeType: h.scopeType, scopeId: h.scopeId, policyId: h.policyId }));
    for (const p of await this.usage.observe(companyId, { scopes, activeOnly: true })) {
      if (p.hardStopEnabled && p.observed >= p.amount) blockedBy.push({ scopeType: p.scopeType, scopeId: p.scopeId, policyId: p.id });
    }
    return blockedBy.length ? { allowed: false, reason: 'budget', blockedBy } : { allowed: true };
  }
}
