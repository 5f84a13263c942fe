import { Injectable } from '@nestjs/common';
import { CompanyScopedRepository } from '../../database/company-scoped.repository';
import { Db } from '../../database/db.service';
import { isoRequired, recordColumns } from '../../database/row-mapping';
import { LIFETIME_START } from '../budgets/budget-windows';
import type { Range } from './cost-range';
import type { CostEventResponseDto, CostTotalsDto } from './dto/cost-event.dto';

// ---- cost events

export interface CostEventRecord {
  id: string;
  companyId: string;
  agentId: string;
  issueId: string | null;
  projectId: string | null;
  goalId: string | null;
  heartbeatRunId: string | null;
  provider: string;
  model: string;
  biller: string;
  billingType: string;
  billingCode: string | null;
  costStatus: string;
  costCents: number | null;
  /** numeric: the priced cost with sub-cent precision (run bookings), else null */
  pricedCents: string | null;
  inputTokens: string | null;
  cachedInputTokens: string | null;
  outputTokens: string | null;
  occurredAt: Date;
  idempotencyKey: string | null;
  createdAt: Date;
}

/** The stored event's record fields, in their order. */
const COST_EVENT_COLUMNS =
  recordColumns(`id, company_id, agent_id, issue_id, project_id, goal_id, heartbeat_run_id, provider, model, biller,
  billing_type, billing_code, cost_status, cost_cents, priced_cents, input_tokens, cached_input_tokens, output_tokens, occurred_at,
  idempotency_key, created_at`);

export const num = (v: string | null): number | null => (v === null ? null : Number(v));

export function toCostEventResponse(r: CostEventRecord): CostEventResponseDto {
  return {
    id: r.id,
    companyId: r.companyId,
    agentId: r.agentId,
    issueId: r.issueId,
    projectId: r.projectId,
    goalId: r.goalId,
    heartbeatRunId: r.heartbeatRunId,
    provider: r.provider,
    model: r.model,
    biller: r.biller,
    billingType: r.billingType,
    billingCode: r.billingCode,
    costStatus: r.costStatus,
    costCents: r.costCents,
    pricedCents: num(r.pricedCents ?? null),
    inputTokens: num(r.inputTokens),
    cachedInputTokens: num(r.cachedInputTokens),
    outputTokens: num(r.outputTokens),
    occurredAt: isoRequired(r.occurredAt),
    idempotencyKey: r.idempotencyKey,
    createdAt: isoRequired(r.createdAt),
  };
}

/** Counts an insert takes as numbers (the record holds numeric and bigint as Postgres gives them: text). */
type CountFields = 'pricedCents' | 'inputTokens' | 'cachedInputTokens' | 'outputTokens';

/**
 * A new event: the record's fields less those the database sets, its counts as numbers (run bookings: pricedCents
 * with sub-cent precision, the booked cents carry the remainder) and who reported it.
 */
export type CostEventInsert = Omit<CostEventRecord, 'id' | 'companyId' | 'createdAt' | 'costStatus' | CountFields> & {
  [K in CountFields]: number | null;
} & {
  costStatus: 'unpriced' | 'reported';
  reportedByActorType: 'agent' | 'user';
  reportedByActorId: string;
};

// ---- totals

/** A report row's sums as Postgres gives them (sum() as numeric and count() as bigint, both text), selected as totals fields. */
type TotalsSums = { [K in keyof CostTotalsDto]: string | number | null };

function toTotals(r: TotalsSums): CostTotalsDto {
  return {
    costCents: Number(r.costCents ?? 0),
    inputTokens: Number(r.inputTokens ?? 0),
    cachedInputTokens: Number(r.cachedInputTokens ?? 0),
    outputTokens: Number(r.outputTokens ?? 0),
    eventCount: Number(r.eventCount ?? 0),
    unpricedEventCount: Number(r.unpricedEventCount ?? 0),
  };
}

/** The sums of a totals query (EVENT_TOTALS), selected as totals fields with recordColumns. */
const TOTALS_COLUMNS = 'cost_cents, input_tokens, cached_input_tokens, output_tokens, event_count, unpriced_event_count';

/** The totals of a report row, zero when there is none. */
export function totals(r: CostTotalsDto | undefined): CostTotalsDto {
  return {
    costCents: r?.costCents ?? 0,
    inputTokens: r?.inputTokens ?? 0,
    cachedInputTokens: r?.cachedInputTokens ?? 0,
    outputTokens: r?.outputTokens ?? 0,
    eventCount: r?.eventCount ?? 0,
    unpricedEventCount: r?.unpricedEventCount ?? 0,
  };
}

/** The totals of one scope (the company, or an agent). */
export type ScopeTotalsRecord = { scopeId: string } & CostTotalsDto;

const toScopeTotals = (r: TotalsSums & { scopeId: string }): ScopeTotalsRecord => ({ scopeId: r.scopeId, ...toTotals(r) });

/** One provider and biller's rolling windows (in ROLLING_WINDOWS order): totals and oldest event. */
export interface QuotaWindowsRecord {
  provider: string;
  biller: string;
  windows: Array<{ totals: CostTotalsDto; oldest: Date | null }>;
}

/** A rolling window's column alias: `w0CostCents`, `w2Oldest`. */
const windowField = (i: number, field: keyof CostTotalsDto | 'oldest'): string => `w${i}${field[0].toUpperCase()}${field.slice(1)}`;

function toQuotaWindows(row: Record<string, string | Date | null>): QuotaWindowsRecord {
  return {
    provider: row.provider as string,
    biller: row.biller as string,
    windows: ROLLING_WINDOWS.map((_w, i) => {
      const pick = (field: keyof CostTotalsDto) => (row[windowField(i, field)] as string | null) ?? null;
      return {
        totals: toTotals({
          costCents: pick('costCents'),
          inputTokens: pick('inputTokens'),
          cachedInputTokens: pick('cachedInputTokens'),
          outputTokens: pick('outputTokens'),
          eventCount: pick('eventCount'),
          unpricedEventCount: pick('unpricedEventCount'),
        }),
        oldest: row[windowField(i, 'oldest')] as Date | null,
      };
    }),
  };
}

export const ROLLING_WINDOWS = [
  { window: '5h', hours: 5 },
  { window: '24h', hours: 24 },
  { window: '7d', hours: 168 },
] as const;

/** Aggregates over raw cost events (aliased `e`). */
const EVENT_TOTALS = `COALESCE(sum(e.cost_cents), 0) AS cost_cents, COALESCE(sum(e.input_tokens), 0) AS input_tokens,
  COALESCE(sum(e.cached_input_tokens), 0) AS cached_input_tokens, COALESCE(sum(e.output_tokens), 0) AS output_tokens,
  count(*) AS event_count, count(*) FILTER (WHERE e.cost_cents IS NULL) AS unpriced_event_count`;
/** The same sums read from lifetime running totals (aliased `u`), as totals fields. */
const USAGE_TOTALS = `u.billed_cents AS "costCents", ${recordColumns('input_tokens, cached_input_tokens, output_tokens, event_count, unpriced_event_count', 'u')}`;

/** SQL filter on `e.occurred_at` with the range as parameters $2 and $3. */
const RANGE_SQL = `($2::timestamptz IS NULL OR e.occurred_at >= $2) AND ($3::timestamptz IS NULL OR e.occurred_at < $3)`;

function windowColumns(i: number, cond: string): string {
  return `COALESCE(sum(e.cost_cents) FILTER (WHERE ${cond}), 0) AS "${windowField(i, 'costCents')}",
            COALESCE(sum(e.input_tokens) FILTER (WHERE ${cond}), 0) AS "${windowField(i, 'inputTokens')}",
            COALESCE(sum(e.cached_input_tokens) FILTER (WHERE ${cond}), 0) AS "${windowField(i, 'cachedInputTokens')}",
            COALESCE(sum(e.output_tokens) FILTER (WHERE ${cond}), 0) AS "${windowField(i, 'outputTokens')}",
            count(*) FILTER (WHERE ${cond}) AS "${windowField(i, 'eventCount')}",
            count(*) FILTER (WHERE ${cond} AND e.cost_cents IS NULL) AS "${windowField(i, 'unpricedEventCount')}"`;
}

/**
 * cost_events and the reports over them (finance_events are in finance.repository.ts). Range reports
 * also read the running totals of cost_usage (owned and written by the budgets module's
 * accumulation); the names of agents and projects are read for the report pages.
 */
@Injectable()
export class CostsRepository extends CompanyScopedRepository {
  constructor(db: Db) {
    super(db);
  }

  // ---- cost events

  /**
   * Stores an event unless it repeats one (same idempotency key, or same run, provider, model and
   * occurredAt): no row then. The statement is written at once (the caller pipelines it after the
   * reference check).
   */
  insertCostEvent(companyId: string, e: CostEventInsert): Promise<CostEventRecord[]> {
    return this.rows<CostEventRecord>(
      companyId,
      `INSERT INTO cost_events (company_id, agent_id, issue_id, project_id, goal_id, heartbeat_run_id, provider, model, biller,
                                billing_type, billing_code, cost_status, cost_cents, input_tokens, cached_input_tokens, output_tokens,
                                occurred_at, idempotency_key, reported_by_actor_type, reported_by_actor_id, priced_cents)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21)
       ON CONFLICT DO NOTHING RETURNING ${COST_EVENT_COLUMNS}`,
      [
        e.agentId,
        e.issueId,
        e.projectId,
        e.goalId,
        e.heartbeatRunId,
        e.provider,
        e.model,
        e.biller,
        e.billingType,
        e.billingCode,
        e.costStatus,
        e.costCents,
        e.inputTokens,
        e.cachedInputTokens,
        e.outputTokens,
        e.occurredAt,
        e.idempotencyKey,
        e.reportedByActorType,
        e.reportedByActorId,
        e.pricedCents,
      ],
    );
  }

  /** Whether the run is a run of the agent in the company (reads heartbeat_runs, owned by heartbeat). */
  async isRunOfAgent(companyId: string, agentId: string, runId: string): Promise<boolean> {
    const r = await this.row<{ run: boolean }>(
      companyId,
      `SELECT EXISTS (SELECT 1 FROM heartbeat_runs WHERE company_id = $1 AND id = $2 AND agent_id = $3) AS run`,
      [runId, agentId],
    );
    return !!r?.run;
  }

  /** The stored event a duplicate repeats (by idempotency key, or by run, provider, model and occurredAt). */
  repeatedCostEvent(
    companyId: string,
    key: { idempotencyKey: string | null; runId: string | null; provider: string; model: string; occurredAt: Date },
  ): Promise<CostEventRecord | null> {
    return this.row<CostEventRecord>(
      companyId,
      `SELECT ${COST_EVENT_COLUMNS} FROM cost_events
        WHERE company_id = $1
          AND (($2::text IS NOT NULL AND idempotency_key = $2)
            OR ($3::uuid IS NOT NULL AND heartbeat_run_id = $3 AND provider = $4 AND model = $5 AND occurred_at = $6))
        LIMIT 1`,
      [key.idempotencyKey, key.runId, key.provider, key.model, key.occurredAt],
    );
  }

  // ---- cost reports

  /** Names and statuses of agents (reads agents, owned by agents; the ids come from this company's totals). */
  agentNames(companyId: string, ids: string[]): Promise<Array<{ id: string; name: string; status: string }>> {
    return this.rows<{ id: string; name: string; status: string }>(
      companyId,
      `SELECT id, name, status FROM agents WHERE company_id = $1 AND id = ANY($2::uuid[])`,
      [ids],
    );
  }

  /** All-time totals of the company or of each agent (reads cost_usage, owned by budgets), biggest spend first. */
  async lifetimeTotals(companyId: string, scope: 'company' | 'agent'): Promise<ScopeTotalsRecord[]> {
    const rows = await this.rows<TotalsSums & { scopeId: string }>(
      companyId,
      `SELECT u.scope_id AS "scopeId", ${USAGE_TOTALS} FROM cost_usage u
          WHERE u.company_id = $1 AND u.scope_type = $2 AND u.window_kind = 'lifetime' AND u.window_start = $3
          ORDER BY u.billed_cents DESC, u.scope_id`,
      [scope, LIFETIME_START],
    );
    return rows.map(toScopeTotals);
  }

  /**
   * Totals of a range: the daily running totals of the whole UTC days [dayFrom, dayTo) (reads cost_usage,
   * owned by budgets) plus the raw events of the partial days before and after them.
   */
  async rangeTotals(
    companyId: string,
    scope: 'company' | 'agent',
    range: { from: Date | string; to: Date | string; dayFrom: Date | string; dayTo: Date | string },
  ): Promise<ScopeTotalsRecord[]> {
    const key = scope === 'agent' ? 'e.agent_id' : 'e.company_id';
    const raw = (cond: string) =>
      `SELECT ${key} AS scope_id, e.cost_cents, e.input_tokens, e.cached_input_tokens, e.output_tokens, 1 AS event_count,
              (e.cost_cents IS NULL)::int AS unpriced_event_count
         FROM cost_events e WHERE e.company_id = $1 AND ${cond}`;
    const rows = await this.rows<TotalsSums & { scopeId: string }>(
      companyId,
      `SELECT x.scope_id AS "scopeId", COALESCE(sum(x.cost_cents), 0) AS "costCents", COALESCE(sum(x.input_tokens), 0) AS "inputTokens",
              COALESCE(sum(x.cached_input_tokens), 0) AS "cachedInputTokens", COALESCE(sum(x.output_tokens), 0) AS "outputTokens",
              sum(x.event_count) AS "eventCount", sum(x.unpriced_event_count) AS "unpricedEventCount"
         FROM (SELECT u.scope_id, u.billed_cents AS cost_cents, u.input_tokens, u.cached_input_tokens, u.output_tokens, u.event_count, u.unpriced_event_count
                 FROM cost_usage u
                WHERE u.company_id = $1 AND u.scope_type = $6 AND u.window_kind = 'utc_day' AND u.window_start >= $4 AND u.window_start < $5
               UNION ALL ${raw(`e.occurred_at >= $2 AND e.occurred_at < LEAST($3::timestamptz, $4::timestamptz)`)}
               UNION ALL ${raw(`e.occurred_at >= GREATEST($2::timestamptz, $5::timestamptz) AND e.occurred_at < $3`)}) x
        GROUP BY x.scope_id
        ORDER BY 2 DESC, 1`,
      [range.from, range.to, range.dayFrom, range.dayTo, scope],
    );
    return rows.map(toScopeTotals);
  }

  /** Range totals per agent, provider and model, with the agent's name and status (reads agents, owned by agents). */
  totalsByAgentModel(
    companyId: string,
    r: Range,
  ): Promise<Array<{ agentId: string; provider: string; model: string; name: string | null; status: string | null } & CostTotalsDto>> {
    return this.grouped<{ agentId: string; provider: string; model: string; name: string | null; status: string | null }>(
      companyId,
      r,
      ['agent_id', 'provider', 'model'],
      `LEFT JOIN agents a ON a.company_id = $1 AND a.id = g.agent_id`,
      'a.name, a.status',
    );
  }

  totalsByProvider(companyId: string, r: Range): Promise<Array<{ provider: string } & CostTotalsDto>> {
    return this.grouped<{ provider: string }>(companyId, r, ['provider']);
  }

  totalsByBiller(companyId: string, r: Range): Promise<Array<{ biller: string } & CostTotalsDto>> {
    return this.grouped<{ biller: string }>(companyId, r, ['biller']);
  }

  /** Range totals per project, with its name (reads projects, owned by projects). */
  totalsByProject(companyId: string, r: Range): Promise<Array<{ projectId: string | null; name: string | null } & CostTotalsDto>> {
    return this.grouped<{ projectId: string | null; name: string | null }>(
      companyId,
      r,
      ['project_id'],
      `LEFT JOIN projects p ON p.company_id = $1 AND p.id = g.project_id`,
      'p.name',
    );
  }

  /**
   * Events of the company in the range grouped by the cost_events columns `keys` (whitelisted), biggest spend first:
   * the keys as record fields, the `extra` columns of the join, and the totals.
   */
  private async grouped<K extends object>(
    companyId: string,
    r: Range,
    keys: string[],
    join = '',
    extra = '',
  ): Promise<Array<K & CostTotalsDto>> {
    const cols = keys.map((k) => `e.${k}`).join(', ');
    const names = keys.map((k) => `g.${k}`).join(', ');
    const rows = await this.rows<K & TotalsSums>(
      companyId,
      `SELECT ${recordColumns(keys.join(', '), 'g')}, ${extra ? extra + ', ' : ''}${recordColumns(TOTALS_COLUMNS, 'g')}
         FROM (SELECT ${cols}, ${EVENT_TOTALS} FROM cost_events e
                WHERE e.company_id = $1 AND ${RANGE_SQL}
                GROUP BY ${cols}) g ${join}
        ORDER BY g.cost_cents DESC, ${names}`,
      [r.from, r.to],
    );
    return rows.map((x) => ({ ...x, ...toTotals(x) }));
  }

  /**
   * Per provider and biller, the totals of each rolling window up to `now` (columns `w<i>CostCents`, …) with its
   * oldest event (`w<i>Oldest`), as one entry per window.
   */
  async quotaWindows(companyId: string, since: Date, now: Date): Promise<QuotaWindowsRecord[]> {
    const rows = await this.rows<Record<string, string | Date | null>>(
      companyId,
      `SELECT e.provider, e.biller,
              ${ROLLING_WINDOWS.map((w, i) => {
                const cond = `e.occurred_at >= $3::timestamptz - interval '${w.hours} hours'`;
                return `${windowColumns(i, cond)}, min(e.occurred_at) FILTER (WHERE ${cond}) AS "${windowField(i, 'oldest')}"`;
              }).join(', ')}
         FROM cost_events e WHERE e.company_id = $1 AND e.occurred_at >= $2 AND e.occurred_at <= $3
        GROUP BY e.provider, e.biller ORDER BY e.provider, e.biller`,
      [since, now],
    );
    return rows.map(toQuotaWindows);
  }
}
