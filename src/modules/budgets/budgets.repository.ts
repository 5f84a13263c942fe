import { Injectable } from '@nestjs/common';
import { CompanyScopedRepository } from '../../database/company-scoped.repository';
import { Db } from '../../database/db.service';
import { recordColumns } from '../../database/row-mapping';
import { BudgetScopeType } from './budget-policy.entity';
import { BudgetMetric, BudgetScope, LIFETIME_START, WindowKind } from './budget-windows';

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

export interface PolicyRecord {
  id: string;
  companyId: string;
  scopeType: BudgetScope;
  scopeId: string;
  scopeName: string | null;
  metric: BudgetMetric;
  windowKind: WindowKind;
  amount: number;
  warnPercent: number;
  hardStopEnabled: boolean;
  notifyEnabled: boolean;
  isActive: boolean;
  billed: string | null;
  tokens: string | null;
  createdAt: Date;
  updatedAt: Date;
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

const POLICY_COLUMNS = recordColumns(
  `id, company_id, scope_type, scope_id, metric, window_kind, amount, warn_percent, hard_stop_enabled, notify_enabled, is_active,
   created_at, updated_at`,
  'p',
);

/**
 * The budgets tables: budget_policies, budget_window_resets and the running totals of cost_usage
 * (written by each cost event's accumulation, read by the policies' observed values); incidents are
 * in budget-incidents.repository.ts. Pausing and resuming companies, agents and projects, and their
 * budget and spend columns, are their owners' (BudgetScopeOwners); wakeups are cancelled through
 * WorkCancellation.
 */
@Injectable()
export class BudgetsRepository extends CompanyScopedRepository {
  constructor(db: Db) {
    super(db);
  }

  // ---- running totals and observed values

  /**
   * Adds one event to its windows. Lock order is fixed (usage rows company, agent, project) so that
   * concurrent events of a company queue instead of deadlocking; the owners' spend statements the
   * caller sends right after it take the company row, then the agent row.
   * Returns the active policies of the event's scopes with the totals this statement wrote.
   */
  accumulate(d: UsageDelta, eventMonth: Date, currentMonth: Date, eventDay: Date): Promise<PolicyRecord[]> {
    return this.rows<PolicyRecord>(
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
            )
       -- the active policies of the event's scopes, observed with the totals this statement wrote
       SELECT ${POLICY_COLUMNS}, NULL AS "scopeName",
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
  ): Promise<PolicyRecord[]> {
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
    return this.rows<PolicyRecord>(
      companyId,
      `SELECT ${POLICY_COLUMNS},
              CASE p.scope_type WHEN 'company' THEN (SELECT name FROM companies WHERE id = p.scope_id)
                                WHEN 'agent' THEN (SELECT name FROM agents WHERE id = p.scope_id)
                                ELSE (SELECT name FROM projects WHERE id = p.scope_id) END AS "scopeName",
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
  async upsertPolicy(companyId: string, p: PolicyUpsert): Promise<{ id: string; inserted: boolean; amount: number; isActive: boolean }> {
    const [row] = await this.rows<{ id: string; inserted: boolean; amount: number; isActive: boolean }>(
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
       RETURNING id, (xmax = 0) AS inserted, amount, is_active AS "isActive"`,
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
  async setPolicyAmount(companyId: string, policyId: string, amount: number): Promise<void> {
    await this.rows(
      companyId,
      `UPDATE budget_policies SET amount = $3, is_active = true, updated_at = now() WHERE company_id = $1 AND id = $2`,
      [policyId, amount],
    );
  }

  // ---- the budget tick

  /**
   * Companies with a policy whose running total calls for an incident that none records (across
   * companies: the sweep then enforces each company on its own).
   */
  async companiesWithOverdueIncidents(month: Date): Promise<string[]> {
    const rows = await this.unscoped<{ company_id: string }>(
      'the budget sweep finds the companies to enforce across all companies (then enforces each on its own)',
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
    const claimed = await this.unscoped(
      'budget_window_resets is instance-wide: one claim of a month start for every company',
      `INSERT INTO budget_window_resets (window_start, claimed_by) VALUES ($1, $2) ON CONFLICT DO NOTHING RETURNING window_start`,
      [month, instanceId],
    );
    return claimed.length > 0;
  }

  /** The companies a month start goes through, one at a time (reads companies, owned by companies). */
  async companyIds(): Promise<string[]> {
    const rows = await this.unscoped<{ id: string }>('a month start goes through every company', `SELECT id FROM companies ORDER BY id`);
    return rows.map((r) => r.id);
  }

  /** The active billed-cents budgets of scopes of one type (one row per scope: the first made). */
  async activeBudgets(companyId: string, scopeType: BudgetScopeType, scopeIds: string[]) {
    return this.rows<{ scopeId: string; amount: number; windowKind: string }>(
      companyId,
      `SELECT DISTINCT ON (scope_id) scope_id AS "scopeId", amount, window_kind AS "windowKind" FROM budget_policies
        WHERE company_id = $1 AND scope_type = $2 AND scope_id = ANY($3::uuid[]) AND is_active AND amount > 0 AND metric = 'billed_cents'
        ORDER BY scope_id, created_at`,
      [scopeType, scopeIds],
    );
  }

  /** Whether an agent or project belongs to the company (reads agents or projects, owned by their modules). */
  async scopeInCompany(companyId: string, scopeType: 'agent' | 'project', scopeId: string): Promise<boolean> {
    const table = scopeType === 'agent' ? 'agents' : 'projects';
    const rows = await this.rows(companyId, `SELECT 1 FROM ${table} WHERE company_id = $1 AND id = $2`, [scopeId]);
    return rows.length > 0;
  }

  // ---- the overview page (reads agents, projects and approvals, owned by their modules)

  async pausedCounts(companyId: string): Promise<{ agents: number; projects: number; approvalsTable: string | null }> {
    const row = await this.row<{ agents: number; projects: number; approvalsTable: string | null }>(
      companyId,
      `SELECT (SELECT count(*)::int FROM agents WHERE company_id = $1 AND status = 'paused') AS agents,
              (SELECT count(*)::int FROM projects WHERE company_id = $1 AND paused_at IS NOT NULL) AS projects,
              to_regclass('approvals')::text AS "approvalsTable"`,
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
