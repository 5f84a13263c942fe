import { Injectable } from '@nestjs/common';
import { Db } from '../../database/db.service';
import { BudgetScopeOwners } from './budget-scope-owners.port';
import { Clock } from './clock.service';
import { BudgetMetric, BudgetScope, floorDayUtc, monthStartUtc, windowAt, WindowKind } from './budget-windows';
import { BudgetsRepository, PolicyRecord, ScopeRef, UsageDelta } from './budgets.repository';

export type { ScopeRef, UsageDelta } from './budgets.repository';

/** A policy with what has been observed in its current window. */
export interface PolicyObservation {
  id: string;
  companyId: string;
  scopeType: BudgetScope;
  scopeId: string;
  scopeName: string | null;
  metric: BudgetMetric;
  windowKind: WindowKind;
  windowStart: Date;
  windowEnd: Date | null;
  amount: number;
  warnPercent: number;
  hardStopEnabled: boolean;
  notifyEnabled: boolean;
  isActive: boolean;
  observed: number;
  createdAt: Date;
  updatedAt: Date;
}

/**
 * Running totals per scope and window (table cost_usage: calendar month, lifetime, and UTC day for
 * range reports), and the observed value of budget policies.
 * A cost event adds itself to the month, day and lifetime rows of its company, agent and project,
 * recalculates spentMonthlyCents of company and agent from the current month's rows (so the first
 * event of a month starts it afresh even before the month tick ran), and reads the observed values
 * of the scopes' active policies, all in one statement.
 */
@Injectable()
export class BudgetUsageService {
  constructor(
    private readonly repo: BudgetsRepository,
    private readonly clock: Clock,
    private readonly owners: BudgetScopeOwners,
    private readonly db: Db,
  ) {}

  /**
   * Adds one event to its windows. Lock order is fixed (usage rows company, agent, project; then the
   * company row; then the agent row) so that concurrent events of a company queue instead of deadlocking.
   * The owners' spend statements are sent right after the accumulation, before anything is awaited:
   * they travel in the same pipeline (with the COMMIT when the caller sends this with it).
   */
  async accumulate(d: UsageDelta): Promise<PolicyObservation[]> {
    // the statements below share one connection, in order, only inside a transaction
    if (!this.db.inTransaction) return this.db.transaction(() => this.accumulate(d));
    const now = this.clock.now();
    const eventMonth = monthStartUtc(d.occurredAt);
    const currentMonth = monthStartUtc(now);
    const accumulated = this.repo.accumulate(d, eventMonth, currentMonth, floorDayUtc(d.occurredAt));
    const spend: Array<Promise<void>> = [];
    if (eventMonth.getTime() === currentMonth.getTime()) {
      spend.push(this.owners.company.syncMonthlySpend(d.companyId, currentMonth));
      spend.push(this.owners.agents.syncMonthlySpend(d.companyId, currentMonth, d.agentId));
    }
    const [rows] = await Promise.all([accumulated, ...spend]);
    return this.toObservations(d.companyId, rows, now);
  }

  /**
   * Policies of a company with their observed value in the window current at the clock's time.
   * `scopes` narrows to the policies of those scopes; `activeOnly` to active policies with an amount.
   */
  async observe(
    companyId: string,
    opts: { scopes?: ScopeRef[]; activeOnly?: boolean; policyId?: string; lock?: boolean } = {},
  ): Promise<PolicyObservation[]> {
    const now = this.clock.now();
    const month = monthStartUtc(now);
    const rows = await this.repo.policies(companyId, month, opts);
    return this.toObservations(companyId, rows, now);
  }

  private async toObservations(companyId: string, rows: PolicyRecord[], now: Date): Promise<PolicyObservation[]> {
    const out: PolicyObservation[] = [];
    for (const r of rows) {
      const w = windowAt(r.windowKind, now);
      let observed = 0;
      if (r.metric === 'billed_cents') observed = Number(r.billed ?? 0);
      else if (r.metric === 'total_tokens') observed = Number(r.tokens ?? 0);
      else if (r.metric === 'run_count') observed = await this.repo.runCount(companyId, r.scopeType, r.scopeId, w.start, w.end);
      out.push({
        id: r.id,
        companyId: r.companyId,
        scopeType: r.scopeType,
        scopeId: r.scopeId,
        scopeName: r.scopeName,
        metric: r.metric,
        windowKind: r.windowKind,
        windowStart: w.start,
        windowEnd: w.end,
        amount: r.amount,
        warnPercent: r.warnPercent,
        hardStopEnabled: r.hardStopEnabled,
        notifyEnabled: r.notifyEnabled,
        isActive: r.isActive,
        observed,
        createdAt: r.createdAt,
        updatedAt: r.updatedAt,
      });
    }
    return out;
  }
}
