import { Injectable } from '@nestjs/common';
import { ActivityRecorder } from '../../common/activity/activity-recorder.service';
import type { Actor } from '../../common/auth/actor';
import { conflict, notFound, unprocessable } from '../../common/errors/domain-error';
import { isUuid } from '../../common/http/uuid';
import { Db } from '../../database/db.service';
import { BudgetEnforcementService } from './budget-enforcement.service';
import { BudgetIncidentRow, toIncidentResponse } from './budget-incident.row';
import { BudgetSyncService } from './budget-sync.service';
import { BudgetUsageService } from './budget-usage.service';
import { BudgetIncidentResponseDto, ResolveIncidentDto, ResolveIncidentResponseDto } from './dto/budget.dto';

/** Budget incidents: listing, and the board's decision on one (keep the scope paused, or raise and resume). */
@Injectable()
export class BudgetIncidentsService {
  constructor(
    private readonly db: Db,
    private readonly usage: BudgetUsageService,
    private readonly enforcement: BudgetEnforcementService,
    private readonly activity: ActivityRecorder,
    private readonly sync: BudgetSyncService,
  ) {}

  async list(companyId: string, status?: 'open' | 'resolved' | 'active'): Promise<BudgetIncidentResponseDto[]> {
    const filter = status === 'active' ? `AND (status = 'open' OR hold_active)` : status ? `AND status = $2` : '';
    const rows = await this.db.query<BudgetIncidentRow>(
      `SELECT * FROM budget_incidents WHERE company_id = $1 ${filter} ORDER BY created_at DESC LIMIT 500`,
      status && status !== 'active' ? [companyId, status] : [companyId],
    );
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
    await this.db.query(`SELECT 1 FROM companies WHERE id = $1 FOR NO KEY UPDATE`, [companyId]);
    const [incident] = await this.db.query<BudgetIncidentRow>(
      `SELECT * FROM budget_incidents WHERE id = $1 AND company_id = $2 FOR UPDATE`,
      [incidentId, companyId],
    );
    if (!incident) throw notFound('Budget incident');
    if (incident.status !== 'open')
      throw conflict('This budget incident is already resolved', 'incident_resolved', { status: incident.status });
    const scope = { companyId, scopeType: incident.scope_type, scopeId: incident.scope_id };
    let resumed = false;
    if (dto.action === 'keep_paused') {
      await this.markResolved(actor, `id = $1`, [incidentId], 'keep_paused', false);
    } else {
      const amount = dto.amount as number;
      const [policy] = await this.usage.observe(companyId, { policyId: incident.policy_id, lock: true });
      if (!policy) throw notFound('Budget policy');
      if (amount <= policy.observed) {
        throw unprocessable(`The new amount must exceed the observed ${policy.metric} (${policy.observed})`, 'budget_not_above_spend', {
          field: 'amount',
          observedAmount: policy.observed,
        });
      }
      await this.db.query(`UPDATE budget_policies SET amount = $2, is_active = true, updated_at = now() WHERE id = $1`, [
        policy.id,
        amount,
      ]);
      await this.sync.mirrorPolicyAmount(policy, amount);
      // every open incident and hold of this policy answers to the new amount
      await this.markResolved(actor, `policy_id = $1 AND (status = 'open' OR hold_active)`, [policy.id], 'raise_budget_and_resume', true);
      resumed = await this.enforcement.resumeScopeIfClear(scope);
    }
    const [after] = await this.db.query<BudgetIncidentRow>(`SELECT * FROM budget_incidents WHERE id = $1`, [incidentId]);
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

  private async markResolved(actor: Actor, filter: string, params: unknown[], resolution: string, releaseHold: boolean): Promise<void> {
    const n = params.length;
    await this.db.query(
      `UPDATE budget_incidents SET status = 'resolved', resolution = COALESCE(CASE WHEN status = 'open' THEN $${n + 1} END, resolution),
              resolved_at = COALESCE(resolved_at, now()), resolved_by_actor_type = COALESCE(resolved_by_actor_type, $${n + 2}),
              resolved_by_actor_id = COALESCE(resolved_by_actor_id, $${n + 3})
              ${releaseHold ? ', hold_active = false' : ''}
        WHERE ${filter}`,
      [...params, resolution, actor.kind === 'agent' ? 'agent' : 'user', actor.kind === 'agent' ? actor.agentId : actor.userId],
    );
  }
}
