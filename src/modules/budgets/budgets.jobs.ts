import { Injectable } from '@nestjs/common';
import { Cron } from '@nestjs/schedule';
import { ActivityRecorder } from '../../common/activity/activity-recorder.service';
import { IntervalJob } from '../../common/jobs/interval-job';
import { AppConfig } from '../../config/app-config';
import { Db } from '../../database/db.service';
import { BudgetEnforcementService } from './budget-enforcement.service';
import { BudgetUsageService } from './budget-usage.service';
import { monthStartUtc } from './budget-windows';
import type { BudgetScope } from './budget-windows';
import { BudgetIncidentsRepository } from './budget-incidents.repository';
import { BudgetScopeOwners } from './budget-scope-owners.port';
import { BudgetsRepository } from './budgets.repository';
import { Clock } from './clock.service';

export const BUDGET_WINDOW_JOB = 'budget-window-tick';

/**
 * The budget tick (every 15 s, only where the scheduler runs): starts each UTC month's budget window
 * and sweeps for incidents a cost event left unenforced. Both go company by company, each company in
 * a transaction of its own: one company's failure is logged and the others still proceed.
 *
 * A month starts once across instances: the first instance to insert the month into
 * budget_window_resets does the work, and its claim commits only after every company had its turn.
 * Each company's step resets spentMonthlyCents and lifts the holds of expired windows; it finds only
 * what is left to do, so a month whose claim never committed (the process stopped) is redone from
 * where it stopped by the next tick. A company whose step failed keeps its expired holds until the
 * next month starts (the error is logged with its id).
 */
@Injectable()
export class BudgetsScheduler extends IntervalJob {
  constructor(
    private readonly db: Db,
    private readonly repo: BudgetsRepository,
    private readonly incidents: BudgetIncidentsRepository,
    private readonly owners: BudgetScopeOwners,
    private readonly clock: Clock,
    private readonly enforcement: BudgetEnforcementService,
    private readonly usage: BudgetUsageService,
    private readonly activity: ActivityRecorder,
    private readonly config: AppConfig,
  ) {
    super('BudgetWindow');
  }

  /** On the quarter minute (a cron job, where the app runs its scheduler): the window start, then the sweep, each failing alone. */
  @Cron('*/15 * * * * *', { name: BUDGET_WINDOW_JOB })
  onTick(): Promise<void> {
    return this.guarded({
      name: BUDGET_WINDOW_JOB,
      what: 'budget tick',
      run: async () => {
        await this.guardedStep('budget window tick', () => this.tick());
        await this.guardedStep('budget sweep', () => this.enforceOverdue());
      },
    });
  }

  private async guardedStep(what: string, step: () => Promise<unknown>): Promise<void> {
    try {
      await step();
    } catch (err) {
      this.logger.error(`${what} failed: ${(err as Error).message}`);
    }
  }

  /**
   * Enforces the policies whose running total calls for an incident that none records. A cost event
   * is enforced right after it commits; a process stopped in between leaves that to this sweep.
   * Incidents are unique per policy, window, kind and amount, so instances sweeping together, or a
   * sweep meeting a cost event's own enforcement, open each incident once. Returns the companies swept.
   */
  async enforceOverdue(): Promise<number> {
    const companies = await this.repo.companiesWithOverdueIncidents(monthStartUtc(this.clock.now()));
    let failed = 0;
    for (const companyId of companies) {
      const ok = await this.forCompany(companyId, 'budget sweep', async () => {
        // evaluate opens only what a policy's observed value calls for, once per window and amount
        await this.enforcement.evaluate(await this.usage.observe(companyId, { activeOnly: true }));
      });
      if (!ok) failed++;
    }
    return companies.length - failed;
  }

  /** Returns true when this call started the current month's window. */
  async tick(): Promise<boolean> {
    const month = monthStartUtc(this.clock.now());
    return this.db.transaction(async () => {
      if (!(await this.repo.claimWindow(month, this.config.instanceId))) return false;
      // the companies go outside the claim's transaction (each in its own), while the claim keeps the
      // other instances waiting; it commits after them
      await this.db.detached(async () => {
        for (const companyId of await this.repo.companyIds()) {
          await this.forCompany(companyId, 'budget window start', () => this.startMonth(companyId, month));
        }
      });
      return true;
    });
  }

  /** Runs one company's step in its own transaction; a failure is logged with the company id and reported as false. */
  private async forCompany(companyId: string, what: string, step: () => Promise<void>): Promise<boolean> {
    try {
      await this.db.transaction(step);
      return true;
    } catch (err) {
      this.logger.error(`${what} failed for company ${companyId}: ${(err as Error).message}`);
      return false;
    }
  }

  /**
   * spentMonthlyCents of the company and its agents becomes the new month's spend (zero unless events
   * already landed in it); incidents of past monthly windows close, and their scopes resume unless
   * another hold remains.
   */
  private async startMonth(companyId: string, month: Date): Promise<void> {
    await this.owners.company.syncMonthlySpend(companyId, month);
    await this.owners.agents.syncMonthlySpend(companyId, month);
    const expired = await this.incidents.liftExpiredIncidents(companyId, month);
    const scopes = new Map<string, { companyId: string; scopeType: BudgetScope; scopeId: string; incidentIds: string[] }>();
    for (const r of expired.filter((e) => e.wasHolding)) {
      const key = `${r.scopeType}:${r.scopeId}`;
      const s = scopes.get(key) ?? { companyId: r.companyId, scopeType: r.scopeType, scopeId: r.scopeId, incidentIds: [] };
      s.incidentIds.push(r.id);
      scopes.set(key, s);
    }
    // the company first, so that its agents see the company hold gone
    const ordered = [...scopes.values()].sort((a, b) => (a.scopeType === 'company' ? -1 : 0) - (b.scopeType === 'company' ? -1 : 0));
    for (const s of ordered) {
      const resumed = await this.enforcement.resumeScopeIfClear(s);
      await this.activity.record({
        companyId: s.companyId,
        action: 'budget.hold_lifted',
        entityType: s.scopeType,
        entityId: s.scopeId,
        details: { windowStart: month.toISOString(), incidentIds: s.incidentIds, resumed, reason: 'window_reset' },
      });
    }
  }
}
