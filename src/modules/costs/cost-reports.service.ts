import { Injectable } from '@nestjs/common';
import { ceilDayUtc, floorDayUtc } from '../budgets/budget-windows';
import { Clock } from '../budgets/clock.service';
import { parseRange, Range } from './cost-range';
import { BudgetScopeOwners } from '../budgets/budget-scope-owners.port';
import { CostsRepository, ROLLING_WINDOWS, ScopeTotalsRecord, totals } from './costs.repository';
import {
  CostByAgentModelRowDto,
  CostByAgentRowDto,
  CostByBillerRowDto,
  CostByProjectRowDto,
  CostByProviderRowDto,
  CostRangeQueryDto,
  CostSummaryResponseDto,
  CostTotalsDto,
  QuotaWindowsResponseDto,
  WindowSpendDto,
  WindowSpendResponseDto,
} from './dto/cost-event.dto';

/**
 * Cost reports, all computed in SQL. Without from/to they read the lifetime running totals (one row
 * per scope); with a range they aggregate cost events through the (company, occurred_at) and
 * (company, agent, occurred_at) indexes, which carry the summed columns.
 */
@Injectable()
export class CostReportsService {
  constructor(
    private readonly repo: CostsRepository,
    private readonly owners: BudgetScopeOwners,
    private readonly clock: Clock,
  ) {}

  async summary(companyId: string, q: CostRangeQueryDto): Promise<CostSummaryResponseDto> {
    const r = parseRange(q);
    const [row] = await this.scopeTotals(companyId, r, 'company');
    const company = await this.owners.company.budget(companyId);
    const t = totals(row);
    const budget = company?.budgetMonthlyCents ?? 0;
    return {
      companyId,
      from: r.from?.toISOString() ?? null,
      to: r.to?.toISOString() ?? null,
      spendCents: t.costCents,
      budgetCents: budget,
      utilizationPercent: budget > 0 ? Math.round((t.costCents * 10_000) / budget) / 100 : 0,
      ...t,
    };
  }

  async byAgent(companyId: string, q: CostRangeQueryDto): Promise<CostByAgentRowDto[]> {
    const rows = await this.scopeTotals(companyId, parseRange(q), 'agent');
    const names = new Map(
      (
        await this.repo.agentNames(
          companyId,
          rows.map((x) => x.scopeId),
        )
      ).map((a) => [a.id, a]),
    );
    return rows.map((x) => ({
      agentId: x.scopeId,
      agentName: names.get(x.scopeId)?.name ?? null,
      agentStatus: names.get(x.scopeId)?.status ?? null,
      ...totals(x),
    }));
  }

  /**
   * Totals of the company (one row) or of each agent, biggest spend first. All time reads the lifetime
   * running totals; a range adds the daily running totals of the whole UTC days inside it to the raw
   * events of its partial first and last day, so its cost grows with days and agents, not with events.
   */
  private async scopeTotals(companyId: string, r: Range, scope: 'company' | 'agent'): Promise<ScopeTotalsRecord[]> {
    if (!r.from && !r.to) return this.repo.lifetimeTotals(companyId, scope);
    const from = r.from ?? '-infinity';
    const to = r.to ?? 'infinity';
    let dayFrom: Date | string = r.from ? ceilDayUtc(r.from) : '-infinity';
    let dayTo: Date | string = r.to ? floorDayUtc(r.to) : 'infinity';
    // no whole day inside the range: all of it comes from raw events
    if (dayFrom instanceof Date && dayTo instanceof Date && dayFrom >= dayTo) dayFrom = dayTo = to;
    return this.repo.rangeTotals(companyId, scope, { from, to, dayFrom, dayTo });
  }

  async byAgentModel(companyId: string, q: CostRangeQueryDto): Promise<CostByAgentModelRowDto[]> {
    const rows = await this.repo.totalsByAgentModel(companyId, parseRange(q));
    return rows.map((x) => ({
      agentId: x.agentId,
      agentName: x.name,
      agentStatus: x.status,
      provider: x.provider,
      model: x.model,
      ...totals(x),
    }));
  }

  async byProvider(companyId: string, q: CostRangeQueryDto): Promise<CostByProviderRowDto[]> {
    const rows = await this.repo.totalsByProvider(companyId, parseRange(q));
    return rows.map((x) => ({ provider: x.provider, ...totals(x) }));
  }

  async byBiller(companyId: string, q: CostRangeQueryDto): Promise<CostByBillerRowDto[]> {
    const rows = await this.repo.totalsByBiller(companyId, parseRange(q));
    return rows.map((x) => ({ biller: x.biller, ...totals(x) }));
  }

  async byProject(companyId: string, q: CostRangeQueryDto): Promise<CostByProjectRowDto[]> {
    const rows = await this.repo.totalsByProject(companyId, parseRange(q));
    return rows.map((x) => ({ projectId: x.projectId, projectName: x.name, ...totals(x) }));
  }

  /** Spend of the last 5 hours, 24 hours and 7 days up to (and including) the clock's now. */
  async windowSpend(companyId: string): Promise<WindowSpendResponseDto> {
    const now = this.clock.now();
    const windows: WindowSpendDto[] = [];
    for (const w of ROLLING_WINDOWS) {
      const [row] = await this.scopeTotals(
        companyId,
        { from: new Date(now.getTime() - w.hours * 3600e3), to: new Date(now.getTime() + 1) },
        'company',
      );
      windows.push(this.windowDto(w, now, totals(row)));
    }
    return { companyId, asOf: now.toISOString(), windows };
  }

  /**
   * Board diagnostics of provider quotas: per provider and biller, the rolling windows with their
   * oldest event and the instant it leaves the window (when capacity frees up).
   */
  async quotaWindows(companyId: string): Promise<QuotaWindowsResponseDto> {
    const now = this.clock.now();
    const rows = await this.repo.quotaWindows(companyId, new Date(now.getTime() - 168 * 3600e3), now);
    return {
      companyId,
      asOf: now.toISOString(),
      providers: rows.map((row) => ({
        provider: row.provider,
        biller: row.biller,
        windows: ROLLING_WINDOWS.map((w, i) => {
          const { totals: t, oldest } = row.windows[i];
          return {
            ...this.windowDto(w, now, t),
            oldestEventAt: oldest ? oldest.toISOString() : null,
            nextReleaseAt: oldest ? new Date(oldest.getTime() + w.hours * 3600e3).toISOString() : null,
          };
        }),
      })),
    };
  }

  private windowDto(w: (typeof ROLLING_WINDOWS)[number], now: Date, t: CostTotalsDto): WindowSpendDto {
    return {
      window: w.window,
      hours: w.hours,
      from: new Date(now.getTime() - w.hours * 3600e3).toISOString(),
      to: now.toISOString(),
      spendCents: t.costCents,
      ...t,
    };
  }
}
