import { Injectable } from '@nestjs/common';
import { Db } from '../../database/db.service';
import { LIFETIME_START } from '../budgets/budget-windows';
import { Clock } from '../budgets/clock.service';
import { parseRange, Range, RANGE_SQL } from './cost-range';
import {
  CostByAgentModelRowDto, CostByAgentRowDto, CostByBillerRowDto, CostByProjectRowDto, CostByProviderRowDto, CostRangeQueryDto,
  CostSummaryResponseDto, CostTotalsDto, QuotaWindowsResponseDto, WindowSpendDto, WindowSpendResponseDto,
} from './dto/cost-event.dto';

interface TotalsRow {
  cost_cents: string | null;
  input_tokens: string | null;
  cached_input_tokens: string | null;
  output_tokens: string | null;
  event_count: string | number | null;
  unpriced_event_count: string | number | null;
}

/** Aggregates over raw cost events (aliased `e`). */
const EVENT_TOTALS = `COALESCE(sum(e.cost_cents), 0) AS cost_cents, COALESCE(sum(e.input_tokens), 0) AS input_tokens,
  COALESCE(sum(e.cached_input_tokens), 0) AS cached_input_tokens, COALESCE(sum(e.output_tokens), 0) AS output_tokens,
  count(*) AS event_count, count(*) FILTER (WHERE e.cost_cents IS NULL) AS unpriced_event_count`;
/** The same sums read from lifetime running totals (aliased `u`). */
const USAGE_TOTALS = `u.billed_cents AS cost_cents, u.input_tokens, u.cached_input_tokens, u.output_tokens,
  u.event_count, u.unpriced_event_count`;

function totals(r: TotalsRow | undefined): CostTotalsDto {
  return {
    costCents: Number(r?.cost_cents ?? 0),
    inputTokens: Number(r?.input_tokens ?? 0),
    cachedInputTokens: Number(r?.cached_input_tokens ?? 0),
    outputTokens: Number(r?.output_tokens ?? 0),
    eventCount: Number(r?.event_count ?? 0),
    unpricedEventCount: Number(r?.unpriced_event_count ?? 0),
  };
}

const ROLLING_WINDOWS = [
  { window: '5h', hours: 5 },
  { window: '24h', hours: 24 },
  { window: '7d', hours: 168 },
] as const;

/**
 * Cost reports, all computed in SQL. Without from/to they read the lifetime running totals (one row
 * per scope); with a range they aggregate cost events through the (company, occurred_at) and
 * (company, agent, occurred_at) indexes, which carry the summed columns.
 */
@Injectable()
export class CostReportsService {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
  ) {}

  private static allTime(r: Range): boolean {
    return !r.from && !r.to;
  }

  async summary(companyId: string, q: CostRangeQueryDto): Promise<CostSummaryResponseDto> {
    const r = parseRange(q);
    const [row] = CostReportsService.allTime(r)
      ? await this.db.query<TotalsRow>(
          `SELECT ${USAGE_TOTALS} FROM cost_usage u
            WHERE u.scope_type = 'company' AND u.scope_id = $1 AND u.window_kind = 'lifetime' AND u.window_start = $2`,
          [companyId, LIFETIME_START],
        )
      : await this.db.query<TotalsRow>(
          `SELECT ${EVENT_TOTALS} FROM cost_events e
            WHERE e.company_id = $1 AND ${RANGE_SQL}`,
          [companyId, r.from, r.to],
        );
    const [company] = await this.db.query<{ budget_monthly_cents: number }>(`SELECT budget_monthly_cents FROM companies WHERE id = $1`, [companyId]);
    const t = totals(row);
    const budget = company?.budget_monthly_cents ?? 0;
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
    const r = parseRange(q);
    const rows = CostReportsService.allTime(r)
      ? await this.db.query<TotalsRow & { agent_id: string; name: string | null; status: string | null }>(
          `SELECT u.scope_id AS agent_id, a.name, a.status, ${USAGE_TOTALS}
             FROM cost_usage u LEFT JOIN agents a ON a.id = u.scope_id
            WHERE u.company_id = $1 AND u.scope_type = 'agent' AND u.window_kind = 'lifetime' AND u.window_start = $2
            ORDER BY u.billed_cents DESC, u.scope_id`,
          [companyId, LIFETIME_START],
        )
      : await this.grouped<{ agent_id: string; name: string | null; status: string | null }>(
          companyId,
          r,
          ['e.agent_id'],
          `LEFT JOIN agents a ON a.id = g.agent_id`,
          'a.name, a.status',
        );
    return rows.map((x) => ({ agentId: x.agent_id, agentName: x.name, agentStatus: x.status, ...totals(x) }));
  }

  async byAgentModel(companyId: string, q: CostRangeQueryDto): Promise<CostByAgentModelRowDto[]> {
    const rows = await this.grouped<{ agent_id: string; provider: string; model: string; name: string | null; status: string | null }>(
      companyId,
      parseRange(q),
      ['e.agent_id', 'e.provider', 'e.model'],
      `LEFT JOIN agents a ON a.id = g.agent_id`,
      'a.name, a.status',
    );
    return rows.map((x) => ({ agentId: x.agent_id, agentName: x.name, agentStatus: x.status, provider: x.provider, model: x.model, ...totals(x) }));
  }

  async byProvider(companyId: string, q: CostRangeQueryDto): Promise<CostByProviderRowDto[]> {
    const rows = await this.grouped<{ provider: string }>(companyId, parseRange(q), ['e.provider']);
    return rows.map((x) => ({ provider: x.provider, ...totals(x) }));
  }

  async byBiller(companyId: string, q: CostRangeQueryDto): Promise<CostByBillerRowDto[]> {
    const rows = await this.grouped<{ biller: string }>(companyId, parseRange(q), ['e.biller']);
    return rows.map((x) => ({ biller: x.biller, ...totals(x) }));
  }

  async byProject(companyId: string, q: CostRangeQueryDto): Promise<CostByProjectRowDto[]> {
    const rows = await this.grouped<{ project_id: string | null; name: string | null }>(
      companyId,
      parseRange(q),
      ['e.project_id'],
      `LEFT JOIN projects p ON p.id = g.project_id`,
      'p.name',
    );
    return rows.map((x) => ({ projectId: x.project_id, projectName: x.name, ...totals(x) }));
  }

  /** Events of the company in the range grouped by `keys` (whitelisted columns), biggest spend first. */
  private async grouped<K extends object>(companyId: string, r: Range, keys: string[], join = '', extra = ''): Promise<Array<K & TotalsRow>> {
    const cols = keys.join(', ');
    const names = keys.map((k) => k.replace('e.', 'g.')).join(', ');
    return this.db.query<K & TotalsRow>(
      `SELECT ${names}, ${extra ? extra + ', ' : ''}g.cost_cents, g.input_tokens, g.cached_input_tokens, g.output_tokens, g.event_count, g.unpriced_event_count
         FROM (SELECT ${cols}, ${EVENT_TOTALS} FROM cost_events e
                WHERE e.company_id = $1 AND ${RANGE_SQL}
                GROUP BY ${cols}) g ${join}
        ORDER BY g.cost_cents DESC, ${names}`,
      [companyId, r.from, r.to],
    );
  }

  /** Spend of the last 5 hours, 24 hours and 7 days up to the clock's now, in one index range scan. */
  async windowSpend(companyId: string): Promise<WindowSpendResponseDto> {
    const now = this.clock.now();
    const [row] = await this.db.query<Record<string, string | null>>(
      `SELECT ${ROLLING_WINDOWS.map((w, i) => this.windowColumns(i, `e.occurred_at >= $3::timestamptz - interval '${w.hours} hours'`)).join(', ')}
         FROM cost_events e WHERE e.company_id = $1 AND e.occurred_at >= $2 AND e.occurred_at <= $3`,
      [companyId, new Date(now.getTime() - 168 * 3600e3), now],
    );
    return { companyId, asOf: now.toISOString(), windows: ROLLING_WINDOWS.map((w, i) => this.windowDto(w, i, now, row)) };
  }

  /**
   * Board diagnostics of provider quotas: per provider and biller, the rolling windows with their
   * oldest event and the instant it leaves the window (when capacity frees up).
   */
  async quotaWindows(companyId: string): Promise<QuotaWindowsResponseDto> {
    const now = this.clock.now();
    const rows = await this.db.query<Record<string, string | Date | null>>(
      `SELECT e.provider, e.biller,
              ${ROLLING_WINDOWS.map((w, i) => {
                const cond = `e.occurred_at >= $3::timestamptz - interval '${w.hours} hours'`;
                return `${this.windowColumns(i, cond)}, min(e.occurred_at) FILTER (WHERE ${cond}) AS w${i}_oldest`;
              }).join(', ')}
         FROM cost_events e WHERE e.company_id = $1 AND e.occurred_at >= $2 AND e.occurred_at <= $3
        GROUP BY e.provider, e.biller ORDER BY e.provider, e.biller`,
      [companyId, new Date(now.getTime() - 168 * 3600e3), now],
    );
    return {
      companyId,
      asOf: now.toISOString(),
      providers: rows.map((row) => ({
        provider: row.provider as string,
        biller: row.biller as string,
        windows: ROLLING_WINDOWS.map((w, i) => {
          const oldest = row[`w${i}_oldest`] as Date | null;
          return {
            ...this.windowDto(w, i, now, row as Record<string, string | null>),
            oldestEventAt: oldest ? oldest.toISOString() : null,
            nextReleaseAt: oldest ? new Date(oldest.getTime() + w.hours * 3600e3).toISOString() : null,
          };
        }),
      })),
    };
  }

  private windowColumns(i: number, cond: string): string {
    return `COALESCE(sum(e.cost_cents) FILTER (WHERE ${cond}), 0) AS w${i}_cost_cents,
            COALESCE(sum(e.input_tokens) FILTER (WHERE ${cond}), 0) AS w${i}_input_tokens,
            COALESCE(sum(e.cached_input_tokens) FILTER (WHERE ${cond}), 0) AS w${i}_cached_input_tokens,
            COALESCE(sum(e.output_tokens) FILTER (WHERE ${cond}), 0) AS w${i}_output_tokens,
            count(*) FILTER (WHERE ${cond}) AS w${i}_event_count,
            count(*) FILTER (WHERE ${cond} AND e.cost_cents IS NULL) AS w${i}_unpriced_event_count`;
  }

  private windowDto(w: (typeof ROLLING_WINDOWS)[number], i: number, now: Date, row: Record<string, string | null> | undefined): WindowSpendDto {
    const pick = (k: string) => row?.[`w${i}_${k}`] ?? null;
    const t = totals({
      cost_cents: pick('cost_cents'),
      input_tokens: pick('input_tokens'),
      cached_input_tokens: pick('cached_input_tokens'),
      output_tokens: pick('output_tokens'),
      event_count: pick('event_count'),
      unpriced_event_count: pick('unpriced_event_count'),
    });
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
