import { Injectable } from '@nestjs/common';
import { CompanyScopedRepository } from '../../database/company-scoped.repository';
import { Db } from '../../database/db.service';
import { iso, isoRequired } from '../../database/row-mapping';
import { BudgetScopeType } from './budget-policy.entity';
import { BudgetMetric, BudgetScope, LIFETIME_START, MAX_INT4, WindowKind } from './budget-windows';
import type { BudgetIncidentResponseDto } from './dto/budget.dto';

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

export interface PolicyRow {
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

export interface BudgetIncidentRow {
  id: string;
  company_id: string;
  policy_id: string;
  scope_type: BudgetScope;
  scope_id: string;
  metric: string;
  window_kind: string;
  window_start: Date;
  window_end: Date | null;
  kind: 'soft' | 'hard';
  status: 'open' | 'resolved';
  budget_amount: string;
  threshold_amount: string;
  observed_amount: string;
  hold_active: boolean;
  resolution: string | null;
  resolved_at: Date | null;
  resolved_by_actor_type: string | null;
  resolved_by_actor_id: string | null;
  created_at: Date;
}

export function toIncidentResponse(r: BudgetIncidentRow): BudgetIncidentResponseDto {
  return {
    id: r.id,
    companyId: r.company_id,
    policyId: r.policy_id,
    scopeType: r.scope_type,
    scopeId: r.scope_id,
    metric: r.metric,
    windowKind: r.window_kind,
    windowStart: isoRequired(r.window_start),
    windowEnd: iso(r.window_end),
    kind: r.kind,
    status: r.status,
    budgetAmount: Number(r.budget_amount),
    thresholdAmount: Number(r.threshold_amount),
    observedAmount: Number(r.observed_amount),
    holdActive: r.hold_active,
    resolution: r.resolution,
    resolvedAt: iso(r.resolved_at),
    resolvedBy: r.resolved_by_actor_id ? { actorType: r.resolved_by_actor_type, actorId: r.resolved_by_actor_id } : null,
    createdAt: isoRequired(r.created_at),
  };
}

/** The values of a new incident (the policy's window and amounts when it opened). */
export interface IncidentInsert {
  policyId: string;
  scopeType: BudgetScope;
  scopeId: string;
  metric: string;
  windowKind: string;
  windowStart: Date;
  windowEnd: Date | null;
  kind: 'soft' | 'hard';
  budgetAmount: number;
  thresholdAmount: number;
  observedAmount: number;
}

/** An incident of a past monthly window that the month start lifted. */
export interface LiftedIncident {
  company_id: string;
  scope_type: BudgetScope;
  scope_id: string;
  was_holding: boolean;
  id: string;
}

export interface PolicyUpsert {
  scopeType: BudgetScope;
  scopeId: string;
  metric: string;
  windowKind: string;
  amount: number;
  warnPercent: number | null;
  hardStopEnabled: boolean | null;
  notifyEnabled: boolean | null;
  isActive: boolean | null;
}

/** Agent statuses a budget hard stop moves to `paused` (terminated and pending ones stay as they are). */
const PAUSABLE_AGENT = `('active','idle','running','error')`;

const POLICY_COLUMNS = `p.id, p.company_id, p.scope_type, p.scope_id, p.metric, p.window_kind, p.amount, p.warn_percent,
  p.hard_stop_enabled, p.notify_enabled, p.is_active, p.created_at, p.updated_at`;

/**
 * The budgets tables: budget_policies, budget_incidents, budget_window_resets and the running totals
 * of cost_usage (written by each cost event's accumulation, read by the policies' observed values).
 * Budget enforcement also pauses and resumes companies, agents and projects and cancels their
 * wakeups: those modules depend on this one (budget sync, the run gate), so the statements on their
 * tables stay here, each marked with its owner.
 */
@Injectable()
export class BudgetsRepository extends CompanyScopedRepository {
  constructor(db: Db) {
    super(db);
  }

  // ---- running totals and observed values

  /**
   * Adds one event to its windows. Lock order is fixed (usage rows company, agent, project; then the
   * company row; then the agent row) so that concurrent events of a company queue instead of deadlocking.
   * Returns the active policies of the event's scopes with the totals this statement wrote.
   */
  accumulate(d: UsageDelta, eventMonth: Date, currentMonth: Date, eventDay: Date): Promise<PolicyRow[]> {
    // writes companies and agents spent_monthly_cents (owned by companies and agents)
    return this.rows<PolicyRow>(
      d.companyId,
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
        d.agentId,
        d.projectId,
        eventMonth,
        LIFETIME_START,
        d.costCents,
        d.inputTokens,
        d.cachedInputTokens,
        d.outputTokens,
        currentMonth,
        eventDay,
      ],
    );
  }

  /**
   * Policies of a company with the running totals of the window current in `month`.
   * `scopes` narrows to the policies of those scopes; `activeOnly` to active policies with an amount.
   */
  async policies(
    companyId: string,
    month: Date,
    opts: { scopes?: ScopeRef[]; activeOnly?: boolean; policyId?: string; lock?: boolean } = {},
  ): Promise<PolicyRow[]> {
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
    // the scope's name: reads companies, agents and projects (owned by their modules)
    return this.rows<PolicyRow>(
      companyId,
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
      params.slice(1),
    );
  }

  /** Heartbeat runs of a scope created in a window; a project's runs name it in their context snapshot. */
  async runCount(companyId: string, scope: BudgetScope, scopeId: string, start: Date, end: Date | null): Promise<number> {
    const filter =
      scope === 'company'
        ? 'company_id = $1 AND company_id = $2::uuid'
        : scope === 'agent'
          ? 'company_id = $1 AND agent_id = $2'
          : `company_id = $1 AND context_snapshot->>'projectId' = $2::text`;
    // reads heartbeat_runs (owned by heartbeat)
    const row = await this.row<{ n: number }>(
      companyId,
      `SELECT count(*)::int AS n FROM heartbeat_runs WHERE ${filter} AND created_at >= $3 AND ($4::timestamptz IS NULL OR created_at < $4)`,
      [scopeId, start, end],
    );
    return row!.n;
  }

  // ---- policies

  /** Creates or updates the policy of (scope, metric, window); omitted settings keep their value or take the defaults. */
  async upsertPolicy(companyId: string, p: PolicyUpsert): Promise<{ id: string; inserted: boolean; amount: number; is_active: boolean }> {
    const [row] = await this.rows<{ id: string; inserted: boolean; amount: number; is_active: boolean }>(
      companyId,
      `INSERT INTO budget_policies (company_id, scope_type, scope_id, metric, window_kind, amount, warn_percent, hard_stop_enabled, notify_enabled, is_active)
       VALUES ($1, $2, $3, $4, $5, $6, COALESCE($7, 80), COALESCE($8, true), COALESCE($9, true), COALESCE($10, true))
       ON CONFLICT (company_id, scope_type, scope_id, metric, window_kind) DO UPDATE SET
         amount = EXCLUDED.amount,
         warn_percent = COALESCE($7, budget_policies.warn_percent),
         hard_stop_enabled = COALESCE($8, budget_policies.hard_stop_enabled),
         notify_enabled = COALESCE($9, budget_policies.notify_enabled),
         is_active = COALESCE($10, budget_policies.is_active),
         updated_at = now()
       RETURNING id, (xmax = 0) AS inserted, amount, is_active`,
      [p.scopeType, p.scopeId, p.metric, p.windowKind, p.amount, p.warnPercent, p.hardStopEnabled, p.notifyEnabled, p.isActive],
    );
    return row;
  }

  /** The monthly billed_cents policy of a scope with a zero budget: deactivated, history kept. */
  async deactivateMonthlyPolicy(companyId: string, scopeType: BudgetScopeType, scopeId: string): Promise<void> {
    await this.rows(
      companyId,
      `UPDATE budget_policies SET is_active = false, amount = 0, updated_at = now()
          WHERE company_id = $1 AND scope_type = $2 AND scope_id = $3 AND metric = 'billed_cents' AND window_kind = 'calendar_month_utc'`,
      [scopeType, scopeId],
    );
  }

  /** The monthly billed_cents policy of a scope at `amountCents` (created, or updated and reactivated). */
  async upsertMonthlyPolicy(companyId: string, scopeType: BudgetScopeType, scopeId: string, amountCents: number): Promise<void> {
    await this.rows(
      companyId,
      `INSERT INTO budget_policies (company_id, scope_type, scope_id, metric, window_kind, amount)
       VALUES ($1, $2, $3, 'billed_cents', 'calendar_month_utc', $4)
       ON CONFLICT (company_id, scope_type, scope_id, metric, window_kind)
       DO UPDATE SET amount = EXCLUDED.amount, is_active = true, updated_at = now()`,
      [scopeType, scopeId, amountCents],
    );
  }

  /** A raised policy: its new amount, active again. */
  async setPolicyAmount(policyId: string, amount: number): Promise<void> {
    await this.db.query(`UPDATE budget_policies SET amount = $2, is_active = true, updated_at = now() WHERE id = $1`, [policyId, amount]);
  }

  // ---- incidents

  /** Opens an incident unless the policy already has one of this kind for the window and amount (null then). */
  async insertIncident(companyId: string, i: IncidentInsert): Promise<BudgetIncidentRow | null> {
    return this.row<BudgetIncidentRow>(
      companyId,
      `INSERT INTO budget_incidents (company_id, policy_id, scope_type, scope_id, metric, window_kind, window_start, window_end,
                                     kind, budget_amount, threshold_amount, observed_amount, hold_active)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)
       ON CONFLICT DO NOTHING RETURNING *`,
      [
        i.policyId,
        i.scopeType,
        i.scopeId,
        i.metric,
        i.windowKind,
        i.windowStart,
        i.windowEnd,
        i.kind,
        i.budgetAmount,
        i.thresholdAmount,
        i.observedAmount,
        i.kind === 'hard',
      ],
    );
  }

  /** Incidents newest first; `active` = open or still holding. */
  listIncidents(companyId: string, status?: 'open' | 'resolved' | 'active'): Promise<BudgetIncidentRow[]> {
    const filter = status === 'active' ? `AND (status = 'open' OR hold_active)` : status ? `AND status = $2` : '';
    return this.rows<BudgetIncidentRow>(
      companyId,
      `SELECT * FROM budget_incidents WHERE company_id = $1 ${filter} ORDER BY created_at DESC LIMIT 500`,
      status && status !== 'active' ? [status] : [],
    );
  }

  /** Open or still holding incidents, newest first. */
  activeIncidents(companyId: string): Promise<BudgetIncidentRow[]> {
    return this.rows<BudgetIncidentRow>(
      companyId,
      `SELECT * FROM budget_incidents WHERE company_id = $1 AND (status = 'open' OR hold_active) ORDER BY created_at DESC`,
    );
  }

  async lockIncident(companyId: string, incidentId: string): Promise<BudgetIncidentRow | null> {
    const [row] = await this.db.query<BudgetIncidentRow>(`SELECT * FROM budget_incidents WHERE id = $1 AND company_id = $2 FOR UPDATE`, [
      incidentId,
      this.scope(companyId),
    ]);
    return row ?? null;
  }

  async incidentById(incidentId: string): Promise<BudgetIncidentRow> {
    const [row] = await this.db.query<BudgetIncidentRow>(`SELECT * FROM budget_incidents WHERE id = $1`, [incidentId]);
    return row;
  }

  /** The board resolved one incident (its hold stays until the window ends). */
  async resolveIncident(incidentId: string, resolution: string, actorType: string, actorId: string): Promise<void> {
    await this.markResolved(`id = $1`, [incidentId], resolution, actorType, actorId, false);
  }

  /** Every open incident and hold of a policy answers to its new amount: resolved, holds released. */
  async resolvePolicyIncidents(policyId: string, resolution: string, actorType: string, actorId: string): Promise<void> {
    await this.markResolved(`policy_id = $1 AND (status = 'open' OR hold_active)`, [policyId], resolution, actorType, actorId, true);
  }

  private async markResolved(
    filter: string,
    params: unknown[],
    resolution: string,
    actorType: string,
    actorId: string,
    releaseHold: boolean,
  ): Promise<void> {
    const n = params.length;
    await this.db.query(
      `UPDATE budget_incidents SET status = 'resolved', resolution = COALESCE(CASE WHEN status = 'open' THEN $${n + 1} END, resolution),
              resolved_at = COALESCE(resolved_at, now()), resolved_by_actor_type = COALESCE(resolved_by_actor_type, $${n + 2}),
              resolved_by_actor_id = COALESCE(resolved_by_actor_id, $${n + 3})
              ${releaseHold ? ', hold_active = false' : ''}
        WHERE ${filter}`,
      [...params, resolution, actorType, actorId],
    );
  }

  /** Whether a hard incident holds the scope. */
  async holds(scopeType: BudgetScope, scopeId: string): Promise<boolean> {
    const rows = await this.db.query(`SELECT 1 FROM budget_incidents WHERE hold_active AND scope_type = $1 AND scope_id = $2 LIMIT 1`, [
      scopeType,
      scopeId,
    ]);
    return rows.length > 0;
  }

  /** The holds of hard incidents on any of the scopes. */
  holdsOn(scopes: ScopeRef[]): Promise<Array<{ scope_type: string; scope_id: string; policy_id: string }>> {
    return this.db.query<{ scope_type: string; scope_id: string; policy_id: string }>(
      `SELECT scope_type, scope_id, policy_id FROM budget_incidents
        WHERE hold_active AND (scope_type, scope_id) IN (SELECT * FROM unnest($1::text[], $2::uuid[]))`,
      [scopes.map((s) => s.scopeType), scopes.map((s) => s.scopeId)],
    );
  }

  // ---- the budget tick

  /**
   * Companies with a policy whose running total calls for an incident that none records (across
   * companies: the sweep then enforces each company on its own).
   */
  async companiesWithOverdueIncidents(month: Date): Promise<string[]> {
    const rows = await this.db.query<{ company_id: string }>(
      `SELECT DISTINCT p.company_id
         FROM budget_policies p
         JOIN cost_usage u ON u.scope_type = p.scope_type AND u.scope_id = p.scope_id AND u.window_kind = p.window_kind
              AND u.window_start = CASE p.window_kind WHEN 'lifetime' THEN $2::timestamptz ELSE $1::timestamptz END
         CROSS JOIN LATERAL (SELECT CASE p.metric WHEN 'billed_cents' THEN u.billed_cents
                                                  ELSE u.input_tokens + u.cached_input_tokens + u.output_tokens END AS observed) o
        WHERE p.is_active AND p.amount > 0 AND p.metric IN ('billed_cents', 'total_tokens')
          AND ((p.notify_enabled AND o.observed >= ceil(p.amount::numeric * p.warn_percent / 100) AND NOT ${incidentOf('soft')})
            OR (p.hard_stop_enabled AND o.observed >= p.amount AND NOT ${incidentOf('hard')}))`,
      [month, LIFETIME_START],
    );
    return rows.map((r) => r.company_id);
  }

  /** Claims the start of a month's window for this instance: true for the one claim that inserted it. */
  async claimWindow(month: Date, instanceId: string): Promise<boolean> {
    const claimed = await this.db.query(
      `INSERT INTO budget_window_resets (window_start, claimed_by) VALUES ($1, $2) ON CONFLICT DO NOTHING RETURNING window_start`,
      [month, instanceId],
    );
    return claimed.length > 0;
  }

  /** The companies a month start goes through, one at a time (reads companies, owned by companies). */
  async companyIds(): Promise<string[]> {
    const rows = await this.db.query<{ id: string }>(`SELECT id FROM companies ORDER BY id`);
    return rows.map((r) => r.id);
  }

  /**
   * spentMonthlyCents of a company and of its agents becomes the month's spend (zero unless events
   * already landed in it). Writes companies and agents (owned by companies and agents).
   */
  async resetMonthlySpend(companyId: string, month: Date): Promise<void> {
    for (const [table, scope, key] of [
      ['companies', 'company', 'id'],
      ['agents', 'agent', 'company_id'],
    ] as const) {
      await this.rows(
        companyId,
        `UPDATE ${table} t SET spent_monthly_cents = x.cents, updated_at = now()
           FROM (SELECT t2.id, LEAST(COALESCE(u.billed_cents, 0), ${MAX_INT4})::int AS cents
                   FROM ${table} t2 LEFT JOIN cost_usage u ON u.scope_type = '${scope}' AND u.scope_id = t2.id
                        AND u.window_kind = 'calendar_month_utc' AND u.window_start = $2
                  WHERE t2.${key} = $1) x
          WHERE t.id = x.id AND t.spent_monthly_cents IS DISTINCT FROM x.cents`,
        [month],
      );
    }
  }

  /** Resolves a company's incidents of monthly windows before `month` and releases their holds. */
  liftExpiredIncidents(companyId: string, month: Date): Promise<LiftedIncident[]> {
    return this.rows<LiftedIncident>(
      companyId,
      `WITH expired AS (
         SELECT id, hold_active FROM budget_incidents
          WHERE company_id = $1 AND window_kind = 'calendar_month_utc' AND window_start < $2 AND (status = 'open' OR hold_active)
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
  }

  // ---- pausing and resuming scopes (companies, agents, projects and wakeups are owned by their modules)

  /** A company stop: the company and its pausable agents, reason `budget` (other pause reasons stay). */
  async pauseCompany(companyId: string): Promise<void> {
    // writes companies (owned by companies)
    await this.rows(
      companyId,
      `UPDATE companies SET status = 'paused', pause_reason = 'budget', updated_at = now() WHERE id = $1 AND status = 'active'`,
    );
    // writes agents (owned by agents)
    await this.rows(
      companyId,
      `UPDATE agents SET status = 'paused', pause_reason = 'budget', updated_at = now() WHERE company_id = $1 AND status IN ${PAUSABLE_AGENT}`,
    );
  }

  /** Writes agents (owned by agents). */
  async pauseAgent(companyId: string, agentId: string): Promise<void> {
    await this.db.query(
      `UPDATE agents SET status = 'paused', pause_reason = 'budget', updated_at = now() WHERE id = $1 AND company_id = $2 AND status IN ${PAUSABLE_AGENT}`,
      [agentId, this.scope(companyId)],
    );
  }

  /** Writes projects (owned by projects). */
  async pauseProject(companyId: string, projectId: string): Promise<void> {
    await this.db.query(
      `UPDATE projects SET paused_at = now(), pause_reason = 'budget', updated_at = now() WHERE id = $1 AND company_id = $2 AND paused_at IS NULL`,
      [projectId, this.scope(companyId)],
    );
  }

  /** Queued and deferred wakeups of the company, skip reason `budget`. */
  cancelCompanyWakeups(companyId: string): Promise<void> {
    return this.cancelWakeups(companyId, `company_id = $1`, []);
  }

  cancelAgentWakeups(companyId: string, agentId: string): Promise<void> {
    return this.cancelWakeups(companyId, `company_id = $1 AND agent_id = $2`, [agentId]);
  }

  cancelProjectWakeups(companyId: string, projectId: string): Promise<void> {
    return this.cancelWakeups(companyId, `company_id = $1 AND payload->>'projectId' = $2::text`, [projectId]);
  }

  /** Writes agent_wakeup_requests (owned by heartbeat). */
  private async cancelWakeups(companyId: string, filter: string, params: unknown[]): Promise<void> {
    await this.rows(
      companyId,
      `UPDATE agent_wakeup_requests SET status = 'cancelled', skip_reason = 'budget', updated_at = now()
        WHERE ${filter} AND status IN ('queued','deferred')`,
      params,
    );
  }

  /** Resumes a company its budget paused; true when it did. Writes companies (owned by companies). */
  async resumeCompany(companyId: string): Promise<boolean> {
    const rows = await this.rows(
      companyId,
      `WITH u AS (UPDATE companies SET status = 'active', pause_reason = NULL, updated_at = now()
          WHERE id = $1 AND status = 'paused' AND pause_reason = 'budget' RETURNING id) SELECT * FROM u`,
    );
    return rows.length > 0;
  }

  /** Wakes the company's agents its budget paused that hold nothing themselves. Writes agents (owned by agents). */
  async resumeCompanyAgents(companyId: string): Promise<void> {
    await this.rows(
      companyId,
      `UPDATE agents a SET status = 'idle', pause_reason = NULL, updated_at = now()
          WHERE a.company_id = $1 AND a.status = 'paused' AND a.pause_reason = 'budget'
            AND NOT EXISTS (SELECT 1 FROM budget_incidents i WHERE i.hold_active AND i.scope_type = 'agent' AND i.scope_id = a.id)`,
    );
  }

  /** Writes agents (owned by agents). */
  async resumeAgent(companyId: string, agentId: string): Promise<boolean> {
    const rows = await this.db.query(
      `WITH u AS (UPDATE agents SET status = 'idle', pause_reason = NULL, updated_at = now()
          WHERE id = $1 AND company_id = $2 AND status = 'paused' AND pause_reason = 'budget' RETURNING id) SELECT * FROM u`,
      [agentId, this.scope(companyId)],
    );
    return rows.length > 0;
  }

  /** Writes projects (owned by projects). */
  async resumeProject(companyId: string, projectId: string): Promise<boolean> {
    const rows = await this.db.query(
      `WITH u AS (UPDATE projects SET paused_at = NULL, pause_reason = NULL, updated_at = now()
        WHERE id = $1 AND company_id = $2 AND pause_reason = 'budget' RETURNING id) SELECT * FROM u`,
      [projectId, this.scope(companyId)],
    );
    return rows.length > 0;
  }

  // ---- the budgets of companies and agents (budgetMonthlyCents, owned by companies and agents)

  /** Sets budgetMonthlyCents of a company; its spentMonthlyCents, or null when there is no such company. */
  async setCompanyBudget(companyId: string, cents: number): Promise<{ spent_monthly_cents: number } | null> {
    return this.row<{ spent_monthly_cents: number }>(
      companyId,
      `WITH u AS (UPDATE companies SET budget_monthly_cents = $2, updated_at = now() WHERE id = $1 RETURNING spent_monthly_cents) SELECT * FROM u`,
      [cents],
    );
  }

  /** budgetMonthlyCents of a company or agent follows its monthly billed_cents policy. */
  async setMonthlyBudget(scopeType: 'company' | 'agent', scopeId: string, cents: number): Promise<void> {
    const table = scopeType === 'company' ? 'companies' : 'agents';
    await this.db.query(`UPDATE ${table} SET budget_monthly_cents = $2, updated_at = now() WHERE id = $1`, [scopeId, cents]);
  }

  /** Locks the company row: budget changes of a company run one at a time (reads companies, owned by companies). */
  async lockCompany(companyId: string): Promise<void> {
    await this.rows(companyId, `SELECT 1 FROM companies WHERE id = $1 FOR NO KEY UPDATE`);
  }

  /** Whether an agent or project belongs to the company (reads agents or projects, owned by their modules). */
  async scopeInCompany(companyId: string, scopeType: 'agent' | 'project', scopeId: string): Promise<boolean> {
    const table = scopeType === 'agent' ? 'agents' : 'projects';
    const rows = await this.db.query(`SELECT 1 FROM ${table} WHERE id = $1 AND company_id = $2`, [scopeId, this.scope(companyId)]);
    return rows.length > 0;
  }

  // ---- the overview page (reads companies, agents, projects and approvals, owned by their modules)

  companyBudget(
    companyId: string,
  ): Promise<{ budget_monthly_cents: number; spent_monthly_cents: number; status: string; pause_reason: string | null } | null> {
    return this.row<{
      budget_monthly_cents: number;
      spent_monthly_cents: number;
      status: string;
      pause_reason: string | null;
    }>(companyId, `SELECT budget_monthly_cents, spent_monthly_cents, status, pause_reason FROM companies WHERE id = $1`);
  }

  async pausedCounts(companyId: string): Promise<{ agents: number; projects: number; approvals_table: string | null }> {
    const row = await this.row<{ agents: number; projects: number; approvals_table: string | null }>(
      companyId,
      `SELECT (SELECT count(*)::int FROM agents WHERE company_id = $1 AND status = 'paused') AS agents,
              (SELECT count(*)::int FROM projects WHERE company_id = $1 AND paused_at IS NOT NULL) AS projects,
              to_regclass('approvals')::text AS approvals_table`,
    );
    return row!;
  }

  /** The approvals table arrives with another module; counted only once it exists. */
  async pendingApprovals(companyId: string): Promise<number> {
    const row = await this.row<{ n: number }>(
      companyId,
      `SELECT count(*)::int AS n FROM approvals WHERE company_id = $1 AND status = 'pending'`,
    );
    return row!.n;
  }
}

function incidentOf(kind: 'soft' | 'hard'): string {
  return `EXISTS (SELECT 1 FROM budget_incidents i WHERE i.policy_id = p.id AND i.window_start = u.window_start
                       AND i.kind = '${kind}' AND i.budget_amount = p.amount)`;
}
