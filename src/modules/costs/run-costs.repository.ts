import { Injectable } from '@nestjs/common';
import { CompanyScopedRepository } from '../../database/company-scoped.repository';
import { Db } from '../../database/db.service';

/** What the cost events of one run have booked so far (its `run:<id>` events). */
export interface RunBooked {
  events: number;
  inputTokens: number;
  cachedInputTokens: number;
  outputTokens: number;
  /** micro-cents (1e-6 cent) of the events' priced_cents */
  pricedMicros: number;
  cents: number;
}

/** An agent's runtime-priced events of one UTC day: priced micro-cents and booked whole cents. */
export interface DayCarry {
  pricedMicros: number;
  cents: number;
}

const micros = (v: string | number | null | undefined): number => Math.round(Number(v ?? 0) * 1e6);

/**
 * The statements of run booking on cost_events: a lock that serialises an agent's run bookings
 * (the remainder carried over a day and a run's later top-ups are read and written under it), what
 * a run has booked so far, and the day's priced and booked totals of an agent.
 */
@Injectable()
export class RunCostsRepository extends CompanyScopedRepository {
  constructor(db: Db) {
    super(db);
  }

  /** Held until the caller's transaction ends. */
  async lockAgent(companyId: string, agentId: string): Promise<void> {
    await this.row(companyId, `SELECT pg_advisory_xact_lock(hashtextextended('run-costs:' || $1 || ':' || $2, 0))`, [agentId]);
  }

  async bookedForRun(companyId: string, runId: string): Promise<RunBooked> {
    const r = await this.row<Record<string, string>>(
      companyId,
      `SELECT count(*) AS events, COALESCE(sum(input_tokens), 0) AS input, COALESCE(sum(cached_input_tokens), 0) AS cached,
              COALESCE(sum(output_tokens), 0) AS output, COALESCE(sum(priced_cents), 0) AS priced, COALESCE(sum(cost_cents), 0) AS cents
         FROM cost_events
        WHERE company_id = $1 AND heartbeat_run_id = $2 AND (idempotency_key = 'run:' || $2 OR idempotency_key LIKE 'run:' || $2 || ':%')`,
      [runId],
    );
    return {
      events: Number(r?.events ?? 0),
      inputTokens: Number(r?.input ?? 0),
      cachedInputTokens: Number(r?.cached ?? 0),
      outputTokens: Number(r?.output ?? 0),
      pricedMicros: micros(r?.priced),
      cents: Number(r?.cents ?? 0),
    };
  }

  /** The agent's events with a priced cost in the UTC day [dayStart, dayStart + 1 day). */
  async dayCarry(companyId: string, agentId: string, dayStart: Date): Promise<DayCarry> {
    const r = await this.row<{ priced: string; cents: string }>(
      companyId,
      `SELECT COALESCE(sum(priced_cents), 0) AS priced, COALESCE(sum(cost_cents), 0) AS cents
         FROM cost_events
        WHERE company_id = $1 AND agent_id = $2 AND priced_cents IS NOT NULL
          AND occurred_at >= $3 AND occurred_at < $3::timestamptz + interval '1 day'`,
      [agentId, dayStart],
    );
    return { pricedMicros: micros(r?.priced), cents: Number(r?.cents ?? 0) };
  }
}
