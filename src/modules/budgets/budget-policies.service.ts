import { Injectable } from '@nestjs/common';
import { notFound, unprocessable } from '../../common/errors/domain-error';
import { Db } from '../../database/db.service';
import { BudgetIncidentRow, toIncidentResponse } from './budget-incident.row';
import { BudgetSyncService } from './budget-sync.service';
import { BudgetUsageService, PolicyObservation } from './budget-usage.service';
import { BudgetScope, defaultWindowKind } from './budget-windows';
import { BudgetOverviewResponseDto, BudgetPolicyResponseDto, BudgetUpdateResponseDto, UpsertBudgetPolicyDto } from './dto/budget.dto';

export function toPolicyResponse(p: PolicyObservation): BudgetPolicyResponseDto {
  const utilization = p.amount > 0 ? Math.round((p.observed * 10_000) / p.amount) / 100 : 0;
  const state =
    !p.isActive || p.amount <= 0 ? 'inactive' : p.observed >= p.amount ? 'exceeded' : utilization >= p.warnPercent ? 'warning' : 'ok';
  return {
    id: p.id,
    companyId: p.companyId,
    scopeType: p.scopeType,
    scopeId: p.scopeId,
    scopeName: p.scopeName,
    metric: p.metric,
    windowKind: p.windowKind,
    windowStart: p.windowStart.toISOString(),
    windowEnd: p.windowEnd ? p.windowEnd.toISOString() : null,
    amount: p.amount,
    observedAmount: p.observed,
    remainingAmount: Math.max(p.amount - p.observed, 0),
    utilizationPercent: utilization,
    warnPercent: p.warnPercent,
    hardStopEnabled: p.hardStopEnabled,
    notifyEnabled: p.notifyEnabled,
    isActive: p.isActive,
    state,
    createdAt: p.createdAt.toISOString(),
    updatedAt: p.updatedAt.toISOString(),
  };
}

/** Budget policies: the monthly budgets of companies and agents, and general policies of any scope. */
@Injectable()
export class BudgetPoliciesService {
  constructor(
    private readonly db: Db,
    private readonly usage: BudgetUsageService,
    private readonly sync: BudgetSyncService,
  ) {}

  /** PATCH company budgets: budgetMonthlyCents and its calendar-month billed_cents policy. */
  async setCompanyBudget(companyId: string, cents: number): Promise<BudgetUpdateResponseDto> {
    const [row] = await this.db.query<{ spent_monthly_cents: number }>(
      `WITH u AS (UPDATE companies SET budget_monthly_cents = $2, updated_at = now() WHERE id = $1 RETURNING spent_monthly_cents) SELECT * FROM u`,
      [companyId, cents],
    );
    if (!row) throw notFound('Company');
    await this.sync.syncMonthlyPolicy(companyId, 'company', companyId, cents);
    return this.budgetResponse(companyId, 'company', companyId, cents, row.spent_monthly_cents);
  }

  /** PATCH agent budgets: the agent is looked up first (404), then company access is checked (403). */

  private async budgetResponse(
    companyId: string,
    scopeType: 'company' | 'agent',
    id: string,
    budget: number,
    spent: number,
  ): Promise<BudgetUpdateResponseDto> {
    const [policy] = (await this.usage.observe(companyId, { scopes: [{ scopeType, scopeId: id }] })).filter(
      (p) => p.metric === 'billed_cents' && p.windowKind === 'calendar_month_utc',
    );
    return {
      id,
      companyId,
      scopeType,
      budgetMonthlyCents: budget,
      spentMonthlyCents: spent,
      policy: policy ? toPolicyResponse(policy) : null,
    };
  }

  /**
   * Creates or updates the policy of (scope, metric, window). Omitted fields keep their stored value,
   * or take the spec defaults on create. The monthly billed_cents policy of a company or agent is its
   * budgetMonthlyCents, so the two are kept equal.
   */
  async upsert(companyId: string, dto: UpsertBudgetPolicyDto): Promise<{ policy: BudgetPolicyResponseDto; created: boolean }> {
    const scopeId = dto.scopeId ?? (dto.scopeType === 'company' ? companyId : undefined);
    if (!scopeId) throw unprocessable(`scopeId is required for ${dto.scopeType} policies`, 'invalid_scope', { field: 'scopeId' });
    await this.assertScopeInCompany(companyId, dto.scopeType, scopeId);
    const metric = dto.metric ?? 'billed_cents';
    const windowKind = dto.windowKind ?? defaultWindowKind(dto.scopeType);
    const [row] = await this.db.query<{ id: string; inserted: boolean; amount: number; is_active: boolean }>(
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
      [
        companyId,
        dto.scopeType,
        scopeId,
        metric,
        windowKind,
        dto.amount,
        dto.warnPercent ?? null,
        dto.hardStopEnabled ?? null,
        dto.notifyEnabled ?? null,
        dto.isActive ?? null,
      ],
    );
    await this.sync.mirrorPolicyAmount({ scopeType: dto.scopeType, scopeId, metric, windowKind }, row.is_active ? row.amount : 0);
    const [policy] = await this.usage.observe(companyId, { policyId: row.id });
    return { policy: toPolicyResponse(policy), created: row.inserted };
  }

  private async assertScopeInCompany(companyId: string, scopeType: BudgetScope, scopeId: string): Promise<void> {
    if (scopeType === 'company') {
      if (scopeId !== companyId) throw unprocessable('A company policy must target this company', 'invalid_scope', { field: 'scopeId' });
      return;
    }
    const table = scopeType === 'agent' ? 'agents' : 'projects';
    const rows = await this.db.query(`SELECT 1 FROM ${table} WHERE id = $1 AND company_id = $2`, [scopeId, companyId]);
    if (!rows.length) throw unprocessable(`The ${scopeType} must belong to this company`, 'invalid_scope', { field: 'scopeId' });
  }

  /** Policies with observed values, active incidents, paused counts and pending approvals. */
  async overview(companyId: string): Promise<BudgetOverviewResponseDto> {
    const [company] = await this.db.query<{
      budget_monthly_cents: number;
      spent_monthly_cents: number;
      status: string;
      pause_reason: string | null;
    }>(`SELECT budget_monthly_cents, spent_monthly_cents, status, pause_reason FROM companies WHERE id = $1`, [companyId]);
    if (!company) throw notFound('Company');
    const policies = await this.usage.observe(companyId);
    const incidents = await this.db.query<BudgetIncidentRow>(
      `SELECT * FROM budget_incidents WHERE company_id = $1 AND (status = 'open' OR hold_active) ORDER BY created_at DESC`,
      [companyId],
    );
    const [counts] = await this.db.query<{ agents: number; projects: number; approvals_table: string | null }>(
      `SELECT (SELECT count(*)::int FROM agents WHERE company_id = $1 AND status = 'paused') AS agents,
              (SELECT count(*)::int FROM projects WHERE company_id = $1 AND paused_at IS NOT NULL) AS projects,
              to_regclass('approvals')::text AS approvals_table`,
      [companyId],
    );
    return {
      companyId,
      budgetMonthlyCents: company.budget_monthly_cents,
      spentMonthlyCents: company.spent_monthly_cents,
      companyStatus: company.status,
      companyPauseReason: company.pause_reason,
      policies: policies.map(toPolicyResponse),
      activeIncidents: incidents.map(toIncidentResponse),
      pausedAgentCount: counts.agents,
      pausedProjectCount: counts.projects,
      pendingApprovalCount: counts.approvals_table ? await this.pendingApprovals(companyId) : 0,
    };
  }

  /** The approvals table arrives with another module; counted only once it exists. */
  private async pendingApprovals(companyId: string): Promise<number> {
    const [row] = await this.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM approvals WHERE company_id = $1 AND status = 'pending'`,
      [companyId],
    );
    return row.n;
  }
}
