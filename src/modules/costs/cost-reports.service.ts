import { Injectable } from '@nestjs/common';
import { Db } from '../../database/db.service';
import { ceilDayUtc, floorDayUtc, LIFETIME_START } from '../budgets/budget-windows';
import { Clock } from '../budgets/clock.service';
import { parseRange, Range, RANGE_SQL } from './cost-range';
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

  async summary(companyId: string, q: CostRangeQueryDto): Promise<CostSummaryResponseDto> {
    const r = parseRange(q);
    const [row] = await this.scopeTotals(companyId, r, 'company');
    const [company] = await this.db.query<{ budget_monthly_cents: number }>(`SELECT budget_monthly_cents FROM companies WHERE id = $1`, [
      companyId,
    ]);
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
    const rows = await this.scopeTotals(companyId, parseRange(q), 'agent');
    const names = new Map(
      (
        await this.db.query<{ id: string; name: string; status: string }>(
          `SELECT id, name, status FROM agents WHERE id = ANY($1::uuid[])`,
          [rows.map((x) => x.scope_id)],
        )
      ).map((a) => [a.id, a]),
    );
    return rows.map((x) => ({
      agentId: x.scope_id,
      agentName: names.get(x.scope_id)?.name ?? null,
      agentStatus: names.get(x.scope_id)?.status ?? null,
      ...totals(x),
    }));
  }

  /**
   * Totals of the company (one row) or of each agent, biggest spend first. All time reads the lifetime
   * running totals; a range adds the daily running totals of the whole UTC days inside it to the raw
   * events of its partial first and last day, so its cost grows with days and agents, not with events.
   */
  private async scopeTotals(companyId: string, r: Range, scope: 'company' | 'agent'): Promise<Array<TotalsRow & { scope_id: string }>> {
    if (!r.from && !r.to) {
      return this.db.query(
        `SELECT u.scope_id, ${USAGE_TOTALS} FROM cost_usage u
          WHERE u.company_id = $1 AND u.scope_type = $2 AND u.window_kind = 'lifetime' AND u.window_start = $3
          ORDER BY u.billed_cents DESC, u.scope_id`,
        [companyId, scope, LIFETIME_START],
      );
    }
    const from = r.from ?? '-infinity';
    const to = r.to ?? 'infinity';
    let dayFrom: Date | string = r.from ? ceilDayUtc(r.from) : '-infinity';
    let dayTo: Date | string = r.to ? floorDayUtc(r.to) : 'infinity';
    // no whole day inside the range: all of it comes from raw events
    if (dayFrom instanceof Date && dayTo instanceof Date && dayFrom >= dayTo) dayFrom = dayTo = to;
    const key = scope === 'agent' ? 'e.agent_id' : 'e.company_id';
    const raw = (cond: string) =>
      `SELECT ${key} AS scope_id, e.cost_cents, e.input_tokens, e.cached_input_tokens, e.output_tokens, 1 AS event_count,
              (e.cost_cents IS NULL)::int AS unpriced_event_count
         FROM cost_events e WHERE e.company_id = $1 AND ${cond}`;
    return this.db.query(
      `SELECT x.scope_id, COALESCE(sum(x.cost_cents), 0) AS cost_cents, COALESCE(sum(x.input_tokens), 0) AS input_tokens,
              COALESCE(sum(x.cached_input_tokens), 0) AS cached_input_tokens, COALESCE(sum(x.output_tokens), 0) AS output_tokens,
              sum(x.event_count) AS event_count, sum(x.unpriced_event_count) AS unpriced_event_count
         FROM (SELECT u.scope_id, u.billed_cents AS cost_cents, u.input_tokens, u.cached_input_tokens, u.output_tokens, u.event_count, u.unpriced_event_count
                 FROM cost_usage u
                WHERE u.company_id = $1 AND u.scope_type = $6 AND u.window_kind = 'utc_day' AND u.window_start >= $4 AND u.window_start < $5
               UNION ALL ${raw(`e.occurred_at >= $2 AND e.occurred_at < LEAST($3::timestamptz, $4::timestamptz)`)}
               UNION ALL ${raw(`e.occurred_at >= GREATEST($2::timestamptz, $5::timestamptz) AND e.occurred_at < $3`)}) x
        GROUP BY x.scope_id
        ORDER BY 2 DESC, 1`,
      [companyId, from, to, dayFrom, dayTo, scope],
    );
  }

  async byAgentModel(companyId: string, q: CostRangeQueryDto): Promise<CostByAgentModelRowDto[]> {
    const rows = await this.grouped<{ agent_id: string; provider: string; model: string; name: string | null; status: string | null }>(
      companyId,
      parseRange(q),
      ['e.agent_id', 'e.provider', 'e.model'],
      `LEFT JOIN agents a ON a.id = g.agent_id`,
      'a.name, a.status',
    );
    return rows.map((x) => ({
      agentId: x.agent_id,
      agentName: x.name,
      agentStatus: x.status,
      provider: x.provider,
      model: x.model,
      ...totals(x),
    }));
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
  private async grouped<K extends object>(
    companyId: string,
    r: Range,
    keys: string[],
    join = '',
    extra = '',
  ): Promise<Array<K & TotalsRow>> {
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
            ...this.windowDto(w, now, this.windowTotals(i, row as Record<string, string | null>)),
            oldestEventAt: oldest ? oldest.toISOString() : null,
            nextReleaseAt: oldest ? new Date(oldest.getTime() + w.hours * 3600e3).toISOString() : null,
          };
        }),
      })),
    };
  }

  private windowTotals(i: number, row: Record<string, string | null>): CostTotalsDto {
    const pick = (k: string) => row[`w${i}_${k}`] ?? null;
    return totals({
      cost_cents: pick('cost_cents'),
      input_tokens: pick('input_tokens'),
      cached_input_tokens: pick('cached_input_tokens'),
      output_tokens: pick('output_tokens'),
      event_count: pick('event_count'),
      unpriced_event_count: pick('unpriced_event_count'),
    });
  }

  private windowColumns(i: number, cond: string): string {
    return `COALESCE(sum(e.cost_cents) FILTER (WHERE ${cond}), 0) AS w${i}_cost_cents,
            COALESCE(sum(e.input_tokens) FILTER (WHERE ${cond}), 0) AS w${i}_input_tokens,
            COALESCE(sum(e.cached_input_tokens) FILTER (WHERE ${cond}), 0) AS w${i}_cached_input_tokens,
            COALESCE(sum(e.output_tokens) FILTER (WHERE ${cond}), 0) AS w${i}_output_tokens,
            count(*) FILTER (WHERE ${cond}) AS w${i}_event_count,
            count(*) FILTER (WHERE ${cond} AND e.cost_cents IS NULL) AS w${i}_unpriced_event_count`;
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
