import { Injectable } from '@nestjs/common';
import { Db } from '../../database/db.service';
import { Clock } from './clock.service';
import { BudgetMetric, BudgetScope, floorDayUtc, LIFETIME_START, MAX_INT4, monthStartUtc, windowAt, WindowKind } from './budget-windows';

/** What a cost event adds to the running totals of its scopes. */
export interface UsageDelta {
  companyId: string;
  agentId: string;
  projectId: string | null;
  occurredAt: Date;
  /** null when unpriced */
  costCents: number | null;
  inputTokens: number | null;
  cachedInputTokens: number | null;
  outputTokens: number | null;
}

export interface ScopeRef {
  scopeType: BudgetScope;
  scopeId: string;
}

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

const POLICY_COLUMNS = `p.id, p.company_id, p.scope_type, p.scope_id, p.metric, p.window_kind, p.amount, p.warn_percent,
  p.hard_stop_enabled, p.notify_enabled, p.is_active, p.created_at, p.updated_at`;

interface PolicyRow {
  id: string;
  company_id: string;
  scope_type: BudgetScope;
  scope_id: string;
  scope_name: string | null;
  metric: BudgetMetric;
  window_kind: WindowKind;
  amount: number;
  warn_percent: number;
  hard_stop_enabled: boolean;
  notify_enabled: boolean;
  is_active: boolean;
  billed: string | null;
  tokens: string | null;
  created_at: Date;
  updated_at: Date;
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
    private readonly db: Db,
    private readonly clock: Clock,
  ) {}

  /**
   * Adds one event to its windows. Lock order is fixed (usage rows company, agent, project; then the
   * company row; then the agent row) so that concurrent events of a company queue instead of deadlocking.
   */
  async accumulate(d: UsageDelta): Promise<PolicyObservation[]> {
    const now = this.clock.now();
    const eventMonth = monthStartUtc(d.occurredAt);
    const currentMonth = monthStartUtc(now);
    const rows = await this.db.query<PolicyRow>(
      `WITH scopes(ord, scope_type, scope_id) AS (VALUES (1, 'company', $1::uuid), (2, 'agent', $2::uuid), (3, 'project', $3::uuid)),
            windows(ord, window_kind, window_start) AS (VALUES (1, 'calendar_month_utc', $4::timestamptz), (2, 'lifetime', $5::timestamptz),
                                                              (3, 'utc_day', $11::timestamptz)),
            u AS (
              INSERT INTO cost_usage AS cu (company_id, scope_type, scope_id, window_kind, window_start, billed_cents,
                                            input_tokens, cached_input_tokens, output_tokens, event_count, unpriced_event_count)
              SELECT $1, s.scope_type, s.scope_id, w.window_kind, w.window_start, COALESCE($6::int, 0),
                     COALESCE($7::bigint, 0), COALESCE($8::bigint, 0), COALESCE($9::bigint, 0), 1, CASE WHEN $6::int IS NULL THEN 1 ELSE 0 END
                FROM scopes s CROSS JOIN windows w
               WHERE s.scope_id IS NOT NULL
               ORDER BY s.ord, w.ord
              ON CONFLICT (scope_type, scope_id, window_kind, window_start) DO UPDATE SET
                billed_cents = cu.billed_cents + EXCLUDED.billed_cents,
                input_tokens = cu.input_tokens + EXCLUDED.input_tokens,
                cached_input_tokens = cu.cached_input_tokens + EXCLUDED.cached_input_tokens,
                output_tokens = cu.output_tokens + EXCLUDED.output_tokens,
                event_count = cu.event_count + 1,
                unpriced_event_count = cu.unpriced_event_count + EXCLUDED.unpriced_event_count,
                updated_at = now()
              RETURNING cu.scope_type, cu.scope_id, cu.window_kind, cu.window_start, cu.billed_cents,
                        cu.input_tokens + cu.cached_input_tokens + cu.output_tokens AS tokens
            ),
            month AS (SELECT scope_type, LEAST(billed_cents, ${MAX_INT4})::int AS cents FROM u
                       WHERE window_kind = 'calendar_month_utc' AND window_start = $10::timestamptz),
            c AS (UPDATE companies SET spent_monthly_cents = m.cents, updated_at = now()
                    FROM month m WHERE m.scope_type = 'company' AND companies.id = $1 RETURNING 1),
            a AS (UPDATE agents SET spent_monthly_cents = m.cents, updated_at = now()
                    FROM month m, (SELECT count(*) FROM c) lock_company_first
                   WHERE m.scope_type = 'agent' AND agents.id = $2 RETURNING 1)
       -- the active policies of the event's scopes, observed with the totals this statement wrote
       SELECT ${POLICY_COLUMNS}, NULL AS scope_name,
              COALESCE(nu.billed_cents, ou.billed_cents) AS billed,
              COALESCE(nu.tokens, ou.input_tokens + ou.cached_input_tokens + ou.output_tokens) AS tokens
         FROM budget_policies p
         LEFT JOIN u nu ON nu.scope_type = p.scope_type AND nu.scope_id = p.scope_id AND nu.window_kind = p.window_kind
              AND nu.window_start = CASE p.window_kind WHEN 'lifetime' THEN $5::timestamptz ELSE $10::timestamptz END
         LEFT JOIN cost_usage ou ON ou.scope_type = p.scope_type AND ou.scope_id = p.scope_id AND ou.window_kind = p.window_kind
              AND ou.window_start = CASE p.window_kind WHEN 'lifetime' THEN $5::timestamptz ELSE $10::timestamptz END
        WHERE p.company_id = $1 AND p.is_active AND p.amount > 0
          AND ((p.scope_type = 'company' AND p.scope_id = $1) OR (p.scope_type = 'agent' AND p.scope_id = $2)
               OR (p.scope_type = 'project' AND p.scope_id = $3))`,
      [
        d.companyId,
        d.agentId,
        d.projectId,
        eventMonth,
        LIFETIME_START,
        d.costCents,
        d.inputTokens,
        d.cachedInputTokens,
        d.outputTokens,
        currentMonth,
        floorDayUtc(d.occurredAt),
      ],
    );
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
    const params: unknown[] = [companyId, month, LIFETIME_START];
    const where = ['p.company_id = $1'];
    if (opts.activeOnly) where.push('p.is_active AND p.amount > 0');
    if (opts.policyId) {
      params.push(opts.policyId);
      where.push(`p.id = $${params.length}`);
    }
    if (opts.scopes) {
      if (!opts.scopes.length) return [];
      params.push(
        opts.scopes.map((s) => s.scopeType),
        opts.scopes.map((s) => s.scopeId),
      );
      where.push(`(p.scope_type, p.scope_id) IN (SELECT * FROM unnest($${params.length - 1}::text[], $${params.length}::uuid[]))`);
    }
    const rows = await this.db.query<PolicyRow>(
      `SELECT ${POLICY_COLUMNS},
              CASE p.scope_type WHEN 'company' THEN (SELECT name FROM companies WHERE id = p.scope_id)
                                WHEN 'agent' THEN (SELECT name FROM agents WHERE id = p.scope_id)
                                ELSE (SELECT name FROM projects WHERE id = p.scope_id) END AS scope_name,
              u.billed_cents AS billed, (u.input_tokens + u.cached_input_tokens + u.output_tokens) AS tokens
         FROM budget_policies p
         LEFT JOIN cost_usage u ON u.scope_type = p.scope_type AND u.scope_id = p.scope_id AND u.window_kind = p.window_kind
              AND u.window_start = CASE p.window_kind WHEN 'lifetime' THEN $3::timestamptz ELSE $2::timestamptz END
        WHERE ${where.join(' AND ')}
        ORDER BY p.scope_type, p.created_at
        ${opts.lock ? 'FOR UPDATE OF p' : ''}`,
      params,
    );
    return this.toObservations(companyId, rows, now);
  }

  private async toObservations(companyId: string, rows: PolicyRow[], now: Date): Promise<PolicyObservation[]> {
    const out: PolicyObservation[] = [];
    for (const r of rows) {
      const w = windowAt(r.window_kind, now);
      let observed = 0;
      if (r.metric === 'billed_cents') observed = Number(r.billed ?? 0);
      else if (r.metric === 'total_tokens') observed = Number(r.tokens ?? 0);
      else if (r.metric === 'run_count') observed = await this.runCount(companyId, r.scope_type, r.scope_id, w.start, w.end);
      out.push({
        id: r.id,
        companyId: r.company_id,
        scopeType: r.scope_type,
        scopeId: r.scope_id,
        scopeName: r.scope_name,
        metric: r.metric,
        windowKind: r.window_kind,
        windowStart: w.start,
        windowEnd: w.end,
        amount: r.amount,
        warnPercent: r.warn_percent,
        hardStopEnabled: r.hard_stop_enabled,
        notifyEnabled: r.notify_enabled,
        isActive: r.is_active,
        observed,
        createdAt: r.created_at,
        updatedAt: r.updated_at,
      });
    }
    return out;
  }

  /** Heartbeat runs of a scope created in a window; a project's runs name it in their context snapshot. */
  private async runCount(companyId: string, scope: BudgetScope, scopeId: string, start: Date, end: Date | null): Promise<number> {
    const filter =
      scope === 'company'
        ? 'company_id = $1 AND company_id = $2::uuid'
        : scope === 'agent'
          ? 'company_id = $1 AND agent_id = $2'
          : `company_id = $1 AND context_snapshot->>'projectId' = $2::text`;
    const [row] = await this.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM heartbeat_runs WHERE ${filter} AND created_at >= $3 AND ($4::timestamptz IS NULL OR created_at < $4)`,
      [companyId, scopeId, start, end],
    );
    return row.n;
  }
}
