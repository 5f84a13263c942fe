import { Injectable, Logger } from '@nestjs/common';
import { Cron } from '@nestjs/schedule';
import { ActivityRecorder } from '../../common/activity/activity-recorder.service';
import { AppConfig } from '../../config/app-config';
import { Db } from '../../database/db.service';
import { BudgetEnforcementService } from './budget-enforcement.service';
import { BudgetUsageService } from './budget-usage.service';
import { LIFETIME_START, MAX_INT4, monthStartUtc } from './budget-windows';
import type { BudgetScope } from './budget-windows';
import { Clock } from './clock.service';

export const BUDGET_WINDOW_JOB = 'budget-window-tick';

/**
 * Starts each UTC month's budget window. The tick runs every 15 s (only where the scheduler runs);
 * the first instance to insert the month into budget_window_resets does the work, in the same
 * transaction as the claim, so it happens exactly once across instances and never half-way.
 */
@Injectable()
export class BudgetWindowService {
  private readonly logger = new Logger('BudgetWindow');

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly enforcement: BudgetEnforcementService,
    private readonly usage: BudgetUsageService,
    private readonly activity: ActivityRecorder,
    private readonly config: AppConfig,
  ) {}

  @Cron('*/15 * * * * *', { name: BUDGET_WINDOW_JOB })
  async onTick(): Promise<void> {
    try {
      await this.tick();
      await this.enforceOverdue();
    } catch (err) {
      this.logger.error(`budget window tick failed: ${(err as Error).message}`);
    }
  }

  /**
   * Enforces the policies whose running total calls for an incident that none records. A cost event
   * is enforced right after it commits; a process stopped in between leaves that to this sweep.
   * Incidents are unique per policy, window, kind and amount, so instances sweeping together, or a
   * sweep meeting a cost event's own enforcement, open each incident once. Returns the companies swept.
   */
  async enforceOverdue(): Promise<number> {
    const companies = await this.db.query<{ company_id: string }>(
      `SELECT DISTINCT p.company_id
         FROM budget_policies p
         JOIN cost_usage u ON u.scope_type = p.scope_type AND u.scope_id = p.scope_id AND u.window_kind = p.window_kind
              AND u.window_start = CASE p.window_kind WHEN 'lifetime' THEN $2::timestamptz ELSE $1::timestamptz END
         CROSS JOIN LATERAL (SELECT CASE p.metric WHEN 'billed_cents' THEN u.billed_cents
                                                  ELSE u.input_tokens + u.cached_input_tokens + u.output_tokens END AS observed) o
        WHERE p.is_active AND p.amount > 0 AND p.metric IN ('billed_cents', 'total_tokens')
          AND ((p.notify_enabled AND o.observed >= ceil(p.amount::numeric * p.warn_percent / 100) AND NOT ${this.incidentOf('soft')})
            OR (p.hard_stop_enabled AND o.observed >= p.amount AND NOT ${this.incidentOf('hard')}))`,
      [monthStartUtc(this.clock.now()), LIFETIME_START],
    );
    // each company on its own: one company's failure must not leave the others unenforced
    let failed = 0;
    for (const { company_id: companyId } of companies) {
      try {
        await this.db.transaction(async () => {
          // evaluate opens only what a policy's observed value calls for, once per window and amount
          await this.enforcement.evaluate(await this.usage.observe(companyId, { activeOnly: true }));
        });
      } catch (err) {
        failed++;
        this.logger.error({ companyId, err }, `budget sweep failed for company ${companyId}: ${(err as Error).message}`);
      }
    }
    return companies.length - failed;
  }

  private incidentOf(kind: 'soft' | 'hard'): string {
    return `EXISTS (SELECT 1 FROM budget_incidents i WHERE i.policy_id = p.id AND i.window_start = u.window_start
                       AND i.kind = '${kind}' AND i.budget_amount = p.amount)`;
  }

  /** Returns true when this call started the current month's window. */
  async tick(): Promise<boolean> {
    const month = monthStartUtc(this.clock.now());
    return this.db.transaction(async () => {
      const claimed = await this.db.query(
        `INSERT INTO budget_window_resets (window_start, claimed_by) VALUES ($1, $2) ON CONFLICT DO NOTHING RETURNING window_start`,
        [month, this.config.instanceId],
      );
      if (!claimed.length) return false;
      await this.resetMonthlySpend(month);
      await this.liftExpiredHolds(month);
      return true;
    });
  }

  /** spentMonthlyCents becomes the new month's spend (zero unless events already landed in it). */
  private async resetMonthlySpend(month: Date): Promise<void> {
    for (const [table, scope] of [
      ['companies', 'company'],
      ['agents', 'agent'],
    ] as const) {
      await this.db.query(
        `UPDATE ${table} t SET spent_monthly_cents = x.cents, updated_at = now()
           FROM (SELECT t2.id, LEAST(COALESCE(u.billed_cents, 0), ${MAX_INT4})::int AS cents
                   FROM ${table} t2 LEFT JOIN cost_usage u ON u.scope_type = '${scope}' AND u.scope_id = t2.id
                        AND u.window_kind = 'calendar_month_utc' AND u.window_start = $1) x
          WHERE t.id = x.id AND t.spent_monthly_cents IS DISTINCT FROM x.cents`,
        [month],
      );
    }
  }

  /** Incidents of past monthly windows close; their scopes resume unless another hold remains. */
  private async liftExpiredHolds(month: Date): Promise<void> {
    const expired = await this.db.query<{
      company_id: string;
      scope_type: BudgetScope;
      scope_id: string;
      was_holding: boolean;
      id: string;
    }>(
      `WITH expired AS (
         SELECT id, hold_active FROM budget_incidents
          WHERE window_kind = 'calendar_month_utc' AND window_start < $1 AND (status = 'open' OR hold_active)
          FOR UPDATE),
       lifted AS (
       UPDATE budget_incidents i SET hold_active = false, status = 'resolved',
              resolution = COALESCE(i.resolution, 'window_reset'), resolved_at = COALESCE(i.resolved_at, now()),
              resolved_by_actor_type = COALESCE(i.resolved_by_actor_type, 'system'), resolved_by_actor_id = COALESCE(i.resolved_by_actor_id, 'budget-window')
         FROM expired e WHERE i.id = e.id
       RETURNING i.id, i.company_id, i.scope_type, i.scope_id, e.hold_active AS was_holding)
       SELECT * FROM lifted`,
      [month],
    );
    const scopes = new Map<string, { companyId: string; scopeType: BudgetScope; scopeId: string; incidentIds: string[] }>();
    for (const r of expired.filter((e) => e.was_holding)) {
      const key = `${r.scope_type}:${r.scope_id}`;
      const s = scopes.get(key) ?? { companyId: r.company_id, scopeType: r.scope_type, scopeId: r.scope_id, incidentIds: [] };
      s.incidentIds.push(r.id);
      scopes.set(key, s);
    }
    // companies first, so that their agents see the company hold gone
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
