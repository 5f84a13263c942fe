import { randomUUID } from 'node:crypto';
import { Injectable, Logger } from '@nestjs/common';
import type { AgentActor } from '../../common/auth/actor';
import { Db } from '../../database/db.service';
import type { RunFinishedEvent, RunUsageSettledEvent } from '../heartbeat/run-lifecycle-events.port';
import { isUuid } from '../../common/http/uuid';
import { CostEventsService } from './cost-events.service';
import type { ProbeUsage } from '../adapters/runtimes/probe-costs.port';
import { BILLING_TYPES, type CreateCostEventDto } from './dto/cost-event.dto';
import { RunCostsRepository, type RunBooked } from './run-costs.repository';

const int = (v: unknown): number | undefined => (Number.isInteger(v) && (v as number) >= 0 ? (v as number) : undefined);
const text = (v: unknown): string | undefined => (typeof v === 'string' && v.trim() ? v.trim().slice(0, 200) : undefined);
const finite = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : null);

/** What a run's usage record says it cost, as booking needs it. */
export interface RunTarget {
  inputTokens: number;
  cachedInputTokens: number;
  outputTokens: number;
  /** a coding CLI's priced (or CLI-reported) cost, micro-cents; null: whole cents or unpriced */
  pricedMicros: number | null;
  /** whole cents an adapter reported (no priced cost) */
  cents: number;
  unpriced: boolean;
  /** the record names tokens (a coding CLI's always does): booked as numbers, else left out */
  tokens: boolean;
}

/** The usage record's booking target, or null when it carries nothing to book. */
export function targetOf(usage: Record<string, unknown>): RunTarget | null {
  const runtime = text(usage.runtime);
  const tokens = int(usage.totalTokens) ?? 0;
  const costCents = int(usage.costCents) ?? 0;
  if (!costCents && !(runtime && tokens > 0)) return null;
  const unpriced = !!runtime && usage.costStatus === 'unpriced';
  const exact = finite(usage.costCentsExact) ?? (finite(usage.costUsd) === null ? null : finite(usage.costUsd)! * 100);
  return {
    inputTokens: int(usage.bookedInputTokens) ?? int(usage.inputTokens) ?? 0,
    cachedInputTokens: int(usage.cachedInputTokens) ?? 0,
    outputTokens: int(usage.outputTokens) ?? 0,
    pricedMicros: runtime && !unpriced && exact !== null ? Math.round(exact * 1e6) : null,
    cents: costCents,
    unpriced,
    tokens: !!runtime || ['inputTokens', 'cachedInputTokens', 'outputTokens'].some((k) => int(usage[k]) !== undefined),
  };
}

/** What the run still has to book beyond `booked` (never less than zero: a token is booked once). */
function deltaOf(t: RunTarget, booked: RunBooked): RunTarget | null {
  const d: RunTarget = {
    inputTokens: Math.max(0, t.inputTokens - booked.inputTokens),
    cachedInputTokens: Math.max(0, t.cachedInputTokens - booked.cachedInputTokens),
    outputTokens: Math.max(0, t.outputTokens - booked.outputTokens),
    pricedMicros: t.pricedMicros === null ? null : Math.max(0, t.pricedMicros - booked.pricedMicros),
    cents: Math.max(0, t.cents - booked.cents),
    unpriced: t.unpriced,
    tokens: t.tokens,
  };
  const money = d.pricedMicros === null ? d.cents : d.pricedMicros;
  return d.inputTokens + d.cachedInputTokens + d.outputTokens + money > 0 ? d : null;
}

/** What a usage record with no earlier events has booked. */
const NOTHING_BOOKED: RunBooked = { events: 0, inputTokens: 0, cachedInputTokens: 0, outputTokens: 0, pricedMicros: 0, cents: 0 };

const startOfUtcDay = (d: Date) => new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate()));

/**
 * Books a run's usage as cost events of its agent: when the run ends (its usage as stored then), and
 * again when its process reported more after that (a model call that completed after the stop, the
 * CLI's final ledger replacing the live estimate). Each booking adds only what the run's earlier
 * events (`run:<id>`, `run:<id>:2`, …) have not booked: tokens and money are booked once.
 *
 * A coding CLI's usage (`usage.runtime`) is booked whenever it used tokens, with its provider,
 * biller, model and project, and as `unpriced` when its model has no known price. Its priced cost is
 * kept with sub-cent precision (`pricedCents`); the whole cents booked carry the remainder forward
 * per agent and UTC day: each event books the whole cents the day's priced total has reached, less
 * what the day booked before, so booked cents stay within one cent of the priced total.
 */
@Injectable()
export class RunCostBooking {
  private readonly logger = new Logger('RunCostBooking');

  constructor(
    private readonly db: Db,
    private readonly costs: CostEventsService,
    private readonly ledger: RunCostsRepository,
  ) {}

  book(e: RunFinishedEvent): Promise<void> {
    return this.bookUpTo({ ...e, usage: e.usage ?? {} });
  }

  settle(e: RunUsageSettledEvent): Promise<void> {
    return this.bookUpTo(e);
  }

  private async bookUpTo(e: RunUsageSettledEvent): Promise<void> {
    const target = targetOf(e.usage);
    if (!target) return;
    try {
      await this.db.transaction(async () => {
        await this.ledger.lockAgent(e.companyId, e.agentId);
        const booked = await this.ledger.bookedForRun(e.companyId, e.runId);
        const delta = deltaOf(target, booked);
        if (!delta) return;
        const now = new Date();
        const cents = delta.pricedMicros === null ? delta.cents : await this.carriedCents(e, delta.pricedMicros, now);
        await this.report(e, delta, cents, booked.events, now);
      });
    } catch (err) {
      this.logger.error(`could not book the cost of run ${e.runId}: ${(err as Error).message}`);
    }
  }

  /**
   * An environment test's model call, run for an agent (the form's test prompt): booked as a cost
   * event of that agent with no run (`billingCode` `environment_test`), reported by whoever ran the
   * test, its priced cost carried with the agent's day like a run's.
   */
  async bookProbe(e: ProbeUsage & { agentId: string }): Promise<void> {
    const t = targetOf(e.usage);
    if (!t || !deltaOf(t, NOTHING_BOOKED)) return;
    await this.db.transaction(async () => {
      await this.ledger.lockAgent(e.companyId, e.agentId);
      const now = new Date();
      const cents = t.pricedMicros === null ? t.cents : await this.carriedCents(e, t.pricedMicros, now);
      await this.costs.report(
        e.actor,
        e.companyId,
        {
          ...this.fields(e.agentId, e.usage, t, cents, now),
          billingCode: 'environment_test',
          idempotencyKey: `environment-test:${randomUUID()}`,
        },
        t.pricedMicros === null ? null : t.pricedMicros / 1e6,
      );
    });
  }

  /** Whole cents for `pricedMicros` more of the agent's day: the day's priced total rounded up, less what the day booked. */
  private async carriedCents(e: { companyId: string; agentId: string }, pricedMicros: number, now: Date): Promise<number> {
    const day = await this.ledger.dayCarry(e.companyId, e.agentId, startOfUtcDay(now));
    return Math.max(0, Math.ceil((day.pricedMicros + pricedMicros) / 1e6) - day.cents);
  }

  private async report(e: RunUsageSettledEvent, d: RunTarget, cents: number, earlier: number, now: Date): Promise<void> {
    const actor: AgentActor = { kind: 'agent', agentId: e.agentId, companyId: e.companyId, source: 'run_token', runId: e.runId };
    await this.costs.report(
      actor,
      e.companyId,
      {
        ...this.fields(e.agentId, e.usage, d, cents, now),
        heartbeatRunId: e.runId,
        issueId: e.issueId ?? undefined,
        idempotencyKey: earlier === 0 ? `run:${e.runId}` : `run:${e.runId}:${earlier + 1}`,
      },
      d.pricedMicros === null ? null : d.pricedMicros / 1e6,
    );
  }

  /** The cost event of a usage record: provider, biller, model, money (or unpriced), tokens, project. */
  private fields(agentId: string, usage: Record<string, unknown>, d: RunTarget, cents: number, now: Date): CreateCostEventDto {
    const projectId = typeof usage.projectId === 'string' && isUuid(usage.projectId) ? usage.projectId : undefined;
    return {
      agentId,
      provider: text(usage.provider) ?? 'adapter',
      model: text(usage.model) ?? 'unknown',
      costCents: d.unpriced ? null : cents,
      ...(d.unpriced ? { costStatus: 'unpriced' as const } : {}),
      biller: text(usage.biller),
      billingType: BILLING_TYPES.find((b) => b === usage.billingType),
      occurredAt: now.toISOString(),
      projectId,
      ...(d.tokens ? { inputTokens: d.inputTokens, cachedInputTokens: d.cachedInputTokens, outputTokens: d.outputTokens } : {}),
    };
  }
}
