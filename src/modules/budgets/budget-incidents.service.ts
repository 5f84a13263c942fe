import { Injectable } from '@nestjs/common';
import { ActivityRecorder } from '../../common/activity/activity-recorder.service';
import type { Actor } from '../../common/auth/actor';
import { notFound } from '../../common/errors/domain-error';
import { isUuid } from '../../common/http/uuid';
import { BudgetEnforcementService } from './budget-enforcement.service';
import { BudgetSyncService } from './budget-sync.service';
import { BudgetUsageService } from './budget-usage.service';
import { budgetError } from './budgets.errors';
import { BudgetIncidentsRepository, toIncidentResponse } from './budget-incidents.repository';
import { BudgetScopeOwners } from './budget-scope-owners.port';
import { BudgetsRepository } from './budgets.repository';
import { BudgetIncidentResponseDto, ResolveIncidentDto, ResolveIncidentResponseDto } from './dto/budget.dto';

/** The actor type and id an incident records as its resolver. */
const resolver = (actor: Actor): [string, string] => (actor.kind === 'agent' ? ['agent', actor.agentId] : ['user', actor.userId]);

/** Budget incidents: listing, and the board's decision on one (keep the scope paused, or raise and resume). */
@Injectable()
export class BudgetIncidentsService {
  constructor(
    private readonly repo: BudgetsRepository,
    private readonly incidents: BudgetIncidentsRepository,
    private readonly owners: BudgetScopeOwners,
    private readonly usage: BudgetUsageService,
    private readonly enforcement: BudgetEnforcementService,
    private readonly activity: ActivityRecorder,
    private readonly sync: BudgetSyncService,
  ) {}

  async list(companyId: string, status?: 'open' | 'resolved' | 'active'): Promise<BudgetIncidentResponseDto[]> {
    const rows = await this.incidents.listIncidents(companyId, status);
    return rows.map(toIncidentResponse);
  }

  /**
   * keep_paused: the incident is resolved and its hold stays until the window ends.
   * raise_budget_and_resume: the policy amount becomes `amount`, which must exceed the observed value
   * (422 `budget_not_above_spend` otherwise); the policy's incidents release their holds and the scope
   * resumes unless another hold remains. The company row is locked first: budget changes of a company
   * run one at a time, in the same order as cost events take their locks.
   */
  async resolve(actor: Actor, companyId: string, incidentId: string, dto: ResolveIncidentDto): Promise<ResolveIncidentResponseDto> {
    if (!isUuid(incidentId)) throw notFound('Budget incident');
    await this.owners.company.lock(companyId);
    const incident = await this.incidents.lockIncident(companyId, incidentId);
    if (!incident) throw notFound('Budget incident');
    if (incident.status !== 'open')
      throw budgetError('incident_resolved', 'This budget incident is already resolved', { status: incident.status });
    const scope = { companyId, scopeType: incident.scopeType, scopeId: incident.scopeId };
    let resumed = false;
    if (dto.action === 'keep_paused') {
      await this.incidents.resolveIncident(companyId, incidentId, 'keep_paused', ...resolver(actor));
    } else {
      const amount = dto.amount as number;
      const [policy] = await this.usage.observe(companyId, { policyId: incident.policyId, lock: true });
      if (!policy) throw notFound('Budget policy');
      if (amount <= policy.observed) {
        throw budgetError('budget_not_above_spend', `The new amount must exceed the observed ${policy.metric} (${policy.observed})`, {
          field: 'amount',
          observedAmount: policy.observed,
        });
      }
      await this.repo.setPolicyAmount(companyId, policy.id, amount);
      await this.sync.mirrorPolicyAmount(companyId, policy, amount);
      // every open incident and hold of this policy answers to the new amount
      await this.incidents.resolvePolicyIncidents(companyId, policy.id, 'raise_budget_and_resume', ...resolver(actor));
      resumed = await this.enforcement.resumeScopeIfClear(scope);
    }
    const after = await this.incidents.incidentById(companyId, incidentId);
    const response = { ...toIncidentResponse(after), resumed };
    await this.activity.record({
      companyId,
      action: 'budget.incident_resolved',
      entityType: 'budget_incident',
      entityId: incidentId,
      actor,
      details: { action: dto.action, amount: dto.amount ?? null, resumed, scopeType: scope.scopeType, scopeId: scope.scopeId },
    });
    return response;
  }
}
