import { Injectable } from '@nestjs/common';
import { CompanyScopedRepository } from '../../database/company-scoped.repository';
import { Db } from '../../database/db.service';
import { isoRequired } from '../../database/row-mapping';
import { LIFETIME_START } from '../budgets/budget-windows';
import type { Range } from './cost-range';
import type { CostEventResponseDto, CostTotalsDto } from './dto/cost-event.dto';

// ---- cost events

interface CostEventRow {
  id: string;
  company_id: string;
  agent_id: string;
  issue_id: string | null;
  project_id: string | null;
  goal_id: string | null;
  heartbeat_run_id: string | null;
  provider: string;
  model: string;
  biller: string;
  billing_type: string;
  billing_code: string | null;
  cost_status: string;
  cost_cents: number | null;
  /** numeric: the priced cost with sub-cent precision (run bookings), else null */
  priced_cents: string | null;
  input_tokens: string | null;
  cached_input_tokens: string | null;
  output_tokens: string | null;
  occurred_at: Date;
  idempotency_key: string | null;
  created_at: Date;
}

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
  pricedCents: string | null;
  inputTokens: string | null;
  cachedInputTokens: string | null;
  outputTokens: string | null;
  occurredAt: Date;
  idempotencyKey: string | null;
  createdAt: Date;
}

function toCostEventRecord(r: CostEventRow): CostEventRecord {
  return {
    id: r.id,
    companyId: r.company_id,
    agentId: r.agent_id,
    issueId: r.issue_id,
    projectId: r.project_id,
    goalId: r.goal_id,
    heartbeatRunId: r.heartbeat_run_id,
    provider: r.provider,
    model: r.model,
    biller: r.biller,
    billingType: r.billing_type,
    billingCode: r.billing_code,
    costStatus: r.cost_status,
    costCents: r.cost_cents,
    pricedCents: r.priced_cents,
    inputTokens: r.input_tokens,
    cachedInputTokens: r.cached_input_tokens,
    outputTokens: r.output_tokens,
    occurredAt: r.occurred_at,
    idempotencyKey: r.idempotency_key,
    createdAt: r.created_at,
  };
}

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

export interface CostEventInsert {
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
  costStatus: 'unpriced' | 'reported';
  costCents: number | null;
  /** run bookings: the priced cost with sub-cent precision (the booked cents carry the remainder) */
  pricedCents: number | null;
  inputTokens: number | null;
  cachedInputTokens: number | null;
  outputTokens: number | null;
  occurredAt: Date;
  idempotencyKey: string | null;
  reportedByActorType: 'agent' | 'user';
  reportedByActorId: string;
}

// ---- totals

interface TotalsRow {
  cost_cents: string | null;
  input_tokens: string | null;
  cached_input_tokens: string | null;
  output_tokens: string | null;
  event_count: string | number | null;
  unpriced_event_count: string | number | null;
}

function toTotals(r: TotalsRow): CostTotalsDto {
  return {
    costCents: Number(r?.cost_cents ?? 0),
    inputTokens: Number(r?.input_tokens ?? 0),
    cachedInputTokens: Number(r?.cached_input_tokens ?? 0),
    outputTokens: Number(r?.output_tokens ?? 0),
    eventCount: Number(r?.event_count ?? 0),
    unpricedEventCount: Number(r?.unpriced_event_count ?? 0),
  };
}

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

const toScopeTotals = (r: TotalsRow & { scope_id: string }): ScopeTotalsRecord => ({ scopeId: r.scope_id, ...toTotals(r) });

/** One provider and biller's rolling windows (in ROLLING_WINDOWS order): totals and oldest event. */
export interface QuotaWindowsRecord {
  provider: string;
  biller: string;
  windows: Array<{ totals: CostTotalsDto; oldest: Date | null }>;
}

function toQuotaWindows(row: Record<string, string | Date | null>): QuotaWindowsRecord {
  return {
    provider: row.provider as string,
    biller: row.biller as string,
    windows: ROLLING_WINDOWS.map((_w, i) => {
      const pick = (k: string) => (row[`w${i}_${k}`] as string | null) ?? null;
      return {
        totals: toTotals({
          cost_cents: pick('cost_cents'),
          input_tokens: pick('input_tokens'),
          cached_input_tokens: pick('cached_input_tokens'),
          output_tokens: pick('output_tokens'),
          event_count: pick('event_count'),
          unpriced_event_count: pick('unpriced_event_count'),
        }),
        oldest: row[`w${i}_oldest`] as Date | null,
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
/** The same sums read from lifetime running totals (aliased `u`). */
const USAGE_TOTALS = `u.billed_cents AS cost_cents, u.input_tokens, u.cached_input_tokens, u.output_tokens,
  u.event_count, u.unpriced_event_count`;

/** SQL filter on `e.occurred_at` with the range as parameters $2 and $3. */
const RANGE_SQL = `($2::timestamptz IS NULL OR e.occurred_at >= $2) AND ($3::timestamptz IS NULL OR e.occurred_at < $3)`;

function windowColumns(i: number, cond: string): string {
  return `COALESCE(sum(e.cost_cents) FILTER (WHERE ${cond}), 0) AS w${i}_cost_cents,
            COALESCE(sum(e.input_tokens) FILTER (WHERE ${cond}), 0) AS w${i}_input_tokens,
            COALESCE(sum(e.cached_input_tokens) FILTER (WHERE ${cond}), 0) AS w${i}_cached_input_tokens,
            COALESCE(sum(e.output_tokens) FILTER (WHERE ${cond}), 0) AS w${i}_output_tokens,
            count(*) FILTER (WHERE ${cond}) AS w${i}_event_count,
            count(*) FILTER (WHERE ${cond} AND e.cost_cents IS NULL) AS w${i}_unpriced_event_count`;
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
  async insertCostEvent(companyId: string, e: CostEventInsert): Promise<CostEventRecord[]> {
    const rows = await this.rows<CostEventRow>(
      companyId,
      `INSERT INTO cost_events (company_id, agent_id, issue_id, project_id, goal_id, heartbeat_run_id, provider, model, biller,
                                billing_type, billing_code, cost_status, cost_cents, input_tokens, cached_input_tokens, output_tokens,
                                occurred_at, idempotency_key, reported_by_actor_type, reported_by_actor_id, priced_cents)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21)
       ON CONFLICT DO NOTHING RETURNING *`,
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
    return rows.map(toCostEventRecord);
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
  async repeatedCostEvent(
    companyId: string,
    key: { idempotencyKey: string | null; runId: string | null; provider: string; model: string; occurredAt: Date },
  ): Promise<CostEventRecord | null> {
    const row = await this.row<CostEventRow>(
      companyId,
      `SELECT * FROM cost_events
        WHERE company_id = $1
          AND (($2::text IS NOT NULL AND idempotency_key = $2)
            OR ($3::uuid IS NOT NULL AND heartbeat_run_id = $3 AND provider = $4 AND model = $5 AND occurred_at = $6))
        LIMIT 1`,
      [key.idempotencyKey, key.runId, key.provider, key.model, key.occurredAt],
    );
    return row ? toCostEventRecord(row) : null;
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
    const rows = await this.rows<TotalsRow & { scope_id: string }>(
      companyId,
      `SELECT u.scope_id, ${USAGE_TOTALS} FROM cost_usage u
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
    const rows = await this.rows<TotalsRow & { scope_id: string }>(
      companyId,
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
      [range.from, range.to, range.dayFrom, range.dayTo, scope],
    );
    return rows.map(toScopeTotals);
  }

  /** Range totals per agent, provider and model, with the agent's name and status (reads agents, owned by agents). */
  async totalsByAgentModel(
    companyId: string,
    r: Range,
  ): Promise<Array<{ agentId: string; provider: string; model: string; name: string | null; status: string | null } & CostTotalsDto>> {
    const rows = await this.grouped<{ agent_id: string; provider: string; model: string; name: string | null; status: string | null }>(
      companyId,
      r,
      ['e.agent_id', 'e.provider', 'e.model'],
      `LEFT JOIN agents a ON a.company_id = $1 AND a.id = g.agent_id`,
      'a.name, a.status',
    );
    return rows.map((x) => ({ agentId: x.agent_id, provider: x.provider, model: x.model, name: x.name, status: x.status, ...toTotals(x) }));
  }

  async totalsByProvider(companyId: string, r: Range): Promise<Array<{ provider: string } & CostTotalsDto>> {
    const rows = await this.grouped<{ provider: string }>(companyId, r, ['e.provider']);
    return rows.map((x) => ({ provider: x.provider, ...toTotals(x) }));
  }

  async totalsByBiller(companyId: string, r: Range): Promise<Array<{ biller: string } & CostTotalsDto>> {
    const rows = await this.grouped<{ biller: string }>(companyId, r, ['e.biller']);
    return rows.map((x) => ({ biller: x.biller, ...toTotals(x) }));
  }

  /** Range totals per project, with its name (reads projects, owned by projects). */
  async totalsByProject(companyId: string, r: Range): Promise<Array<{ projectId: string | null; name: string | null } & CostTotalsDto>> {
    const rows = await this.grouped<{ project_id: string | null; name: string | null }>(
      companyId,
      r,
      ['e.project_id'],
      `LEFT JOIN projects p ON p.company_id = $1 AND p.id = g.project_id`,
      'p.name',
    );
    return rows.map((x) => ({ projectId: x.project_id, name: x.name, ...toTotals(x) }));
  }

  /** Events of the company in the range grouped by `keys` (whitelisted columns), biggest spend first. */
  private grouped<K extends object>(companyId: string, r: Range, keys: string[], join = '', extra = ''): Promise<Array<K & TotalsRow>> {
    const cols = keys.join(', ');
    const names = keys.map((k) => k.replace('e.', 'g.')).join(', ');
    return this.rows<K & TotalsRow>(
      companyId,
      `SELECT ${names}, ${extra ? extra + ', ' : ''}g.cost_cents, g.input_tokens, g.cached_input_tokens, g.output_tokens, g.event_count, g.unpriced_event_count
         FROM (SELECT ${cols}, ${EVENT_TOTALS} FROM cost_events e
                WHERE e.company_id = $1 AND ${RANGE_SQL}
                GROUP BY ${cols}) g ${join}
        ORDER BY g.cost_cents DESC, ${names}`,
      [r.from, r.to],
    );
  }

  /**
   * Per provider and biller, the totals of each rolling window up to `now` (columns `w<i>_…`) with its
   * oldest event (`w<i>_oldest`), as one entry per window.
   */
  async quotaWindows(companyId: string, since: Date, now: Date): Promise<QuotaWindowsRecord[]> {
    const rows = await this.rows<Record<string, string | Date | null>>(
      companyId,
      `SELECT e.provider, e.biller,
              ${ROLLING_WINDOWS.map((w, i) => {
                const cond = `e.occurred_at >= $3::timestamptz - interval '${w.hours} hours'`;
                return `${windowColumns(i, cond)}, min(e.occurred_at) FILTER (WHERE ${cond}) AS w${i}_oldest`;
              }).join(', ')}
         FROM cost_events e WHERE e.company_id = $1 AND e.occurred_at >= $2 AND e.occurred_at <= $3
        GROUP BY e.provider, e.biller ORDER BY e.provider, e.biller`,
      [since, now],
    );
    return rows.map(toQuotaWindows);
  }
}
