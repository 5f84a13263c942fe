import { Injectable } from '@nestjs/common';
import { notFound } from '../../common/errors/domain-error';
import { BudgetSyncService } from './budget-sync.service';
import { BudgetUsageService, PolicyObservation } from './budget-usage.service';
import { BudgetScope, defaultWindowKind } from './budget-windows';
import { budgetError } from './budgets.errors';
import { BudgetIncidentsRepository, toIncidentResponse } from './budget-incidents.repository';
import { BudgetScopeOwners } from './budget-scope-owners.port';
import { BudgetsRepository } from './budgets.repository';
import { BudgetOverviewResponseDto, BudgetPolicyResponseDto, BudgetUpdateResponseDto, UpsertBudgetPolicyDto } from './dto/budget.dto';

/** A scope's budget as the lists of projects show it. */
export interface ScopeBudget {
  amountCents: number;
  windowKind: string;
}

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
    private readonly repo: BudgetsRepository,
    private readonly incidents: BudgetIncidentsRepository,
    private readonly owners: BudgetScopeOwners,
    private readonly usage: BudgetUsageService,
    private readonly sync: BudgetSyncService,
  ) {}

  /** PATCH company budgets: budgetMonthlyCents and its calendar-month billed_cents policy. */
  async setCompanyBudget(companyId: string, cents: number): Promise<BudgetUpdateResponseDto> {
    const row = await this.owners.company.setMonthlyBudget(companyId, cents);
    if (!row) throw notFound('Company');
    await this.sync.syncMonthlyPolicy(companyId, 'company', companyId, cents);
    return this.budgetResponse(companyId, 'company', companyId, cents, row.spentMonthlyCents);
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
    if (!scopeId) throw budgetError('invalid_scope', `scopeId is required for ${dto.scopeType} policies`, { field: 'scopeId' });
    await this.assertScopeInCompany(companyId, dto.scopeType, scopeId);
    const metric = dto.metric ?? 'billed_cents';
    const windowKind = dto.windowKind ?? defaultWindowKind(dto.scopeType);
    const row = await this.repo.upsertPolicy(companyId, {
      scopeType: dto.scopeType,
      scopeId,
      metric,
      windowKind,
      amount: dto.amount,
      warnPercent: dto.warnPercent ?? null,
      hardStopEnabled: dto.hardStopEnabled ?? null,
      notifyEnabled: dto.notifyEnabled ?? null,
      isActive: dto.isActive ?? null,
    });
    await this.sync.mirrorPolicyAmount(companyId, { scopeType: dto.scopeType, scopeId, metric, windowKind }, row.isActive ? row.amount : 0);
    const [policy] = await this.usage.observe(companyId, { policyId: row.id });
    return { policy: toPolicyResponse(policy), created: row.inserted };
  }

  private async assertScopeInCompany(companyId: string, scopeType: BudgetScope, scopeId: string): Promise<void> {
    if (scopeType === 'company') {
      if (scopeId !== companyId) throw budgetError('invalid_scope', 'A company policy must target this company', { field: 'scopeId' });
      return;
    }
    if (!(await this.repo.scopeInCompany(companyId, scopeType, scopeId)))
      throw budgetError('invalid_scope', `The ${scopeType} must belong to this company`, { field: 'scopeId' });
  }

  /** The budget of each scope that has an active billed-cents policy (`{ amountCents, windowKind }`), by scope id. */
  async budgetsOf(companyId: string, scopeType: 'agent' | 'project', scopeIds: string[]): Promise<Map<string, ScopeBudget>> {
    if (!scopeIds.length) return new Map();
    const rows = await this.repo.activeBudgets(companyId, scopeType, scopeIds);
    return new Map(rows.map((r) => [r.scopeId, { amountCents: r.amount, windowKind: r.windowKind }]));
  }

  /** Policies with observed values, active incidents, paused counts and pending approvals. */
  async overview(companyId: string): Promise<BudgetOverviewResponseDto> {
    const company = await this.owners.company.budget(companyId);
    if (!company) throw notFound('Company');
    const policies = await this.usage.observe(companyId);
    const incidents = await this.incidents.activeIncidents(companyId);
    const counts = await this.repo.pausedCounts(companyId);
    return {
      companyId,
      budgetMonthlyCents: company.budgetMonthlyCents,
      spentMonthlyCents: company.spentMonthlyCents,
      companyStatus: company.status,
      companyPauseReason: company.pauseReason,
      policies: policies.map(toPolicyResponse),
      activeIncidents: incidents.map(toIncidentResponse),
      pausedAgentCount: counts.agents,
      pausedProjectCount: counts.projects,
      pendingApprovalCount: counts.approvalsTable ? await this.repo.pendingApprovals(companyId) : 0,
    };
  }
}
