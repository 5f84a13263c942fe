import { Injectable } from '@nestjs/common';
import { ActivityRecorder } from '../../common/activity/activity-recorder.service';
import type { Actor } from '../../common/auth/actor';
import { WorkCancellation } from '../../common/events/work-cancellation.port';
import { Db } from '../../database/db.service';
import { PolicyObservation, UsageDelta } from './budget-usage.service';
import { monthStartUtc } from './budget-windows';
import type { BudgetScope } from './budget-windows';
import { BudgetIncidentRecord, BudgetIncidentsRepository, toIncidentResponse } from './budget-incidents.repository';
import { BudgetScopeOwners } from './budget-scope-owners.port';

/** The observed value at which a policy warns. */
const warnThreshold = (p: PolicyObservation): number => Math.ceil((p.amount * p.warnPercent) / 100);

export interface BudgetScopeKey {
  companyId: string;
  scopeType: BudgetScope;
  scopeId: string;
}

/**
 * Enforcement: after a cost event, each active policy of the event's scopes is compared with its
 * observed value. Reaching warnPercent opens one soft incident per window (notifications enabled);
 * reaching 100 percent opens one hard incident (hard stop enabled) that pauses the scope with pause
 * reason `budget` and cancels its work at once. The unique index on incidents makes "one" hold under
 * concurrency: racing events insert with ON CONFLICT DO NOTHING and only the winner pauses.
 */
@Injectable()
export class BudgetEnforcementService {
  constructor(
    private readonly db: Db,
    private readonly repo: BudgetIncidentsRepository,
    private readonly owners: BudgetScopeOwners,
    private readonly activity: ActivityRecorder,
    private readonly work: WorkCancellation,
  ) {}

  /** Evaluates the observations a cost event's accumulation returned (its scopes' active policies). */
  async evaluate(observations: PolicyObservation[], actor?: Actor): Promise<BudgetIncidentRecord[]> {
    const opened: BudgetIncidentRecord[] = [];
    for (const p of observations) opened.push(...(await this.evaluatePolicy(p, actor)));
    return opened;
  }

  /**
   * Enforcement of a committed cost event: the policies whose observed value this event took across
   * the warning or the limit are evaluated in a transaction of their own (most events cross nothing
   * and open no transaction). Totals are exact and ordered, so exactly one event crosses each
   * threshold, and the incident records the value that crossed it. What a crossing event leaves
   * unenforced (its process stopped) is found by the budget tick's sweep.
   */
  async enforceCommitted(observations: PolicyObservation[], added: UsageDelta, actor?: Actor): Promise<void> {
    const due = observations.filter((p) => this.crossedBy(p, added));
    if (due.length) await this.db.transaction(() => this.evaluate(due, actor));
  }

  /** Whether the event took the policy's observed value across its warning or its limit. */
  private crossedBy(p: PolicyObservation, added: UsageDelta): boolean {
    if (!this.callsForIncident(p)) return false;
    // runs are not counted by cost events: a run_count policy at its count is enforced on any event
    if (p.metric === 'run_count') return true;
    const inWindow = p.windowKind === 'lifetime' || monthStartUtc(added.occurredAt).getTime() === p.windowStart.getTime();
    const tokens = (added.inputTokens ?? 0) + (added.cachedInputTokens ?? 0) + (added.outputTokens ?? 0);
    const before = p.observed - (!inWindow ? 0 : p.metric === 'billed_cents' ? (added.costCents ?? 0) : tokens);
    const crossed = (threshold: number) => before < threshold && p.observed >= threshold;
    return (p.notifyEnabled && crossed(warnThreshold(p))) || (p.hardStopEnabled && crossed(p.amount));
  }

  /** Whether the observed value has reached the warning (notifications on) or the limit (hard stop on). */
  private callsForIncident(p: PolicyObservation): boolean {
    if (!p.isActive || p.amount <= 0) return false;
    return (p.notifyEnabled && p.observed >= warnThreshold(p)) || (p.hardStopEnabled && p.observed >= p.amount);
  }

  /** Opens the incidents a policy's observed value calls for (each at most once per window and amount). */
  async evaluatePolicy(p: PolicyObservation, actor?: Actor): Promise<BudgetIncidentRecord[]> {
    if (!p.isActive || p.amount <= 0) return [];
    const opened: BudgetIncidentRecord[] = [];
    const warnAt = warnThreshold(p);
    if (p.notifyEnabled && p.observed >= warnAt) {
      const soft = await this.openIncident(p, 'soft', warnAt);
      if (soft) opened.push(soft);
    }
    if (p.hardStopEnabled && p.observed >= p.amount) {
      const hard = await this.openIncident(p, 'hard', p.amount);
      if (hard) {
        opened.push(hard);
        await this.pauseScope({ companyId: p.companyId, scopeType: p.scopeType, scopeId: p.scopeId });
      }
    }
    for (const inc of opened) {
      await this.activity.record({
        companyId: p.companyId,
        action: inc.kind === 'hard' ? 'budget.hard_stop' : 'budget.warning',
        entityType: 'budget_incident',
        entityId: inc.id,
        actor,
        details: toIncidentResponse(inc) as unknown as Record<string, unknown>,
      });
    }
    return opened;
  }

  private openIncident(p: PolicyObservation, kind: 'soft' | 'hard', threshold: number): Promise<BudgetIncidentRecord | null> {
    return this.repo.insertIncident(p.companyId, {
      policyId: p.id,
      scopeType: p.scopeType,
      scopeId: p.scopeId,
      metric: p.metric,
      windowKind: p.windowKind,
      windowStart: p.windowStart,
      windowEnd: p.windowEnd,
      kind,
      budgetAmount: p.amount,
      thresholdAmount: threshold,
      observedAmount: p.observed,
    });
  }

  /**
   * Pauses the scope (reason `budget`, through its owner) and cancels its work: the heartbeat
   * engine's WorkCancellation listener cancels queued and deferred wakeups here with skip reason
   * `budget` and kills in-flight runs after commit. A company stop pauses its agents too. Scopes
   * paused for another reason keep that reason.
   */
  async pauseScope(s: BudgetScopeKey): Promise<void> {
    if (s.scopeType === 'company') {
      await this.owners.company.pause(s.companyId);
      await this.owners.agents.pauseAll(s.companyId);
      await this.work.cancel({ companyId: s.companyId }, 'budget');
    } else if (s.scopeType === 'agent') {
      await this.owners.agents.pause(s.companyId, s.scopeId);
      await this.work.cancel({ companyId: s.companyId, agentIds: [s.scopeId] }, 'budget');
    } else {
      await this.owners.projects.pause(s.companyId, s.scopeId);
      await this.work.cancel({ companyId: s.companyId, projectId: s.scopeId }, 'budget');
    }
  }

  /**
   * Lifts a budget pause once no hold of the scope remains. Agents stay paused while their company
   * holds; a company resume wakes only the agents it paused that hold nothing themselves.
   */
  async resumeScopeIfClear(s: BudgetScopeKey): Promise<boolean> {
    if (await this.repo.holds(s.companyId, s.scopeType, s.scopeId)) return false;
    if (s.scopeType === 'company') {
      const resumed = await this.owners.company.resume(s.companyId);
      await this.owners.agents.resumeAll(s.companyId, await this.repo.heldAgentIds(s.companyId));
      return resumed;
    }
    if (s.scopeType === 'agent') {
      if (await this.repo.holds(s.companyId, 'company', s.companyId)) return false;
      return this.owners.agents.resume(s.companyId, s.scopeId);
    }
    return this.owners.projects.resume(s.companyId, s.scopeId);
  }
}
