import { Injectable } from '@nestjs/common';
import { ActivityRecorder } from '../../common/activity/activity-recorder.service';
import type { Actor } from '../../common/auth/actor';
import { WorkCancellation } from '../../common/events/work-cancellation';
import { Db } from '../../database/db.service';
import { BudgetIncidentRow, toIncidentResponse } from './budget-incident.row';
import { PolicyObservation, UsageDelta } from './budget-usage.service';
import { monthStartUtc } from './budget-windows';
import type { BudgetScope } from './budget-windows';

/** Agent statuses a budget hard stop moves to `paused` (terminated and pending ones stay as they are). */
const PAUSABLE_AGENT = `('active','idle','running','error')`;

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
    private readonly activity: ActivityRecorder,
    private readonly work: WorkCancellation,
  ) {}

  /** Evaluates the observations a cost event's accumulation returned (its scopes' active policies). */
  async evaluate(observations: PolicyObservation[], actor?: Actor): Promise<BudgetIncidentRow[]> {
    const opened: BudgetIncidentRow[] = [];
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
  async evaluatePolicy(p: PolicyObservation, actor?: Actor): Promise<BudgetIncidentRow[]> {
    if (!p.isActive || p.amount <= 0) return [];
    const opened: BudgetIncidentRow[] = [];
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

  private async openIncident(p: PolicyObservation, kind: 'soft' | 'hard', threshold: number): Promise<BudgetIncidentRow | null> {
    const [row] = await this.db.query<BudgetIncidentRow>(
      `INSERT INTO budget_incidents (company_id, policy_id, scope_type, scope_id, metric, window_kind, window_start, window_end,
                                     kind, budget_amount, threshold_amount, observed_amount, hold_active)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)
       ON CONFLICT DO NOTHING RETURNING *`,
      [
        p.companyId,
        p.id,
        p.scopeType,
        p.scopeId,
        p.metric,
        p.windowKind,
        p.windowStart,
        p.windowEnd,
        kind,
        p.amount,
        threshold,
        p.observed,
        kind === 'hard',
      ],
    );
    return row ?? null;
  }

  /**
   * Pauses the scope (reason `budget`) and cancels its work: queued and deferred wakeups are cancelled
   * here with skip reason `budget`; the heartbeat engine's listener kills in-flight runs after commit.
   * A company stop pauses its agents too. Scopes paused for another reason keep that reason.
   */
  async pauseScope(s: BudgetScopeKey): Promise<void> {
    if (s.scopeType === 'company') {
      await this.db.query(
        `UPDATE companies SET status = 'paused', pause_reason = 'budget', updated_at = now() WHERE id = $1 AND status = 'active'`,
        [s.companyId],
      );
      await this.db.query(
        `UPDATE agents SET status = 'paused', pause_reason = 'budget', updated_at = now() WHERE company_id = $1 AND status IN ${PAUSABLE_AGENT}`,
        [s.companyId],
      );
      await this.cancelWakeups(`company_id = $1`, [s.companyId]);
      await this.work.cancel({ companyId: s.companyId }, 'budget');
    } else if (s.scopeType === 'agent') {
      await this.db.query(
        `UPDATE agents SET status = 'paused', pause_reason = 'budget', updated_at = now() WHERE id = $1 AND company_id = $2 AND status IN ${PAUSABLE_AGENT}`,
        [s.scopeId, s.companyId],
      );
      await this.cancelWakeups(`company_id = $1 AND agent_id = $2`, [s.companyId, s.scopeId]);
      await this.work.cancel({ companyId: s.companyId, agentIds: [s.scopeId] }, 'budget');
    } else {
      await this.db.query(
        `UPDATE projects SET paused_at = now(), pause_reason = 'budget', updated_at = now() WHERE id = $1 AND company_id = $2 AND paused_at IS NULL`,
        [s.scopeId, s.companyId],
      );
      await this.cancelWakeups(`company_id = $1 AND payload->>'projectId' = $2::text`, [s.companyId, s.scopeId]);
      await this.work.cancel({ companyId: s.companyId, projectId: s.scopeId }, 'budget');
    }
  }

  private async cancelWakeups(filter: string, params: unknown[]): Promise<void> {
    await this.db.query(
      `UPDATE agent_wakeup_requests SET status = 'cancelled', skip_reason = 'budget', updated_at = now()
        WHERE ${filter} AND status IN ('queued','deferred')`,
      params,
    );
  }

  /**
   * Lifts a budget pause once no hold of the scope remains. Agents stay paused while their company
   * holds; a company resume wakes only the agents it paused that hold nothing themselves.
   */
  async resumeScopeIfClear(s: BudgetScopeKey): Promise<boolean> {
    if (await this.holds(s.scopeType, s.scopeId)) return false;
    if (s.scopeType === 'company') {
      const rows = await this.db.query(
        `WITH u AS (UPDATE companies SET status = 'active', pause_reason = NULL, updated_at = now()
          WHERE id = $1 AND status = 'paused' AND pause_reason = 'budget' RETURNING id) SELECT * FROM u`,
        [s.companyId],
      );
      await this.db.query(
        `UPDATE agents a SET status = 'idle', pause_reason = NULL, updated_at = now()
          WHERE a.company_id = $1 AND a.status = 'paused' AND a.pause_reason = 'budget'
            AND NOT EXISTS (SELECT 1 FROM budget_incidents i WHERE i.hold_active AND i.scope_type = 'agent' AND i.scope_id = a.id)`,
        [s.companyId],
      );
      return rows.length > 0;
    }
    if (s.scopeType === 'agent') {
      if (await this.holds('company', s.companyId)) return false;
      const rows = await this.db.query(
        `WITH u AS (UPDATE agents SET status = 'idle', pause_reason = NULL, updated_at = now()
          WHERE id = $1 AND company_id = $2 AND status = 'paused' AND pause_reason = 'budget' RETURNING id) SELECT * FROM u`,
        [s.scopeId, s.companyId],
      );
      return rows.length > 0;
    }
    const rows = await this.db.query(
      `WITH u AS (UPDATE projects SET paused_at = NULL, pause_reason = NULL, updated_at = now()
        WHERE id = $1 AND company_id = $2 AND pause_reason = 'budget' RETURNING id) SELECT * FROM u`,
      [s.scopeId, s.companyId],
    );
    return rows.length > 0;
  }

  private async holds(scopeType: BudgetScope, scopeId: string): Promise<boolean> {
    const rows = await this.db.query(`SELECT 1 FROM budget_incidents WHERE hold_active AND scope_type = $1 AND scope_id = $2 LIMIT 1`, [
      scopeType,
      scopeId,
    ]);
    return rows.length > 0;
  }
}
