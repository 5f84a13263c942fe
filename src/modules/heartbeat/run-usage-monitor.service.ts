import { Injectable, Logger } from '@nestjs/common';
import { BudgetUsageService, type ScopeRef } from '../budgets/budget-usage.service';
import { HeartbeatRunsRepository } from './heartbeat-runs.repository';
import type { EngineAgentRecord, RunRecord } from './heartbeat.types';
import { RunLiveEvents } from './run-live-events';

/** A per-run cap of the agent's runtimeConfig, and the run's stop code when it is crossed. */
const CAPS = [
  { key: 'maxCostCents', code: 'cap_max_cost_cents', usage: 'costCents', unit: 'cents' },
  { key: 'maxTokens', code: 'cap_max_tokens', usage: 'totalTokens', unit: 'tokens' },
  { key: 'maxTurns', code: 'cap_max_turns', usage: 'turns', unit: 'turns' },
] as const;

/** Live usage events at most this often; the last update before the end always goes out. */
const USAGE_EVENT_MS = 100;
/**
 * A model call's growing usage is written to the run's row at most this often; a call that completed
 * (the turn count grew) is written at once, so an instance killed mid-run loses at most the call it
 * was reading (OpenCode reports a call only after its tools: fast tools put several in 250 ms).
 */
const PERSIST_MS = 250;
/** hard-stop budgets are re-read this often while a run spends */
const BUDGET_REFRESH_MS = 5_000;

export interface RunStop {
  code: string;
  message: string;
}

interface HardStop {
  scope: string;
  metric: 'billed_cents' | 'total_tokens';
  /** what the scope may still spend in the policy's window when the budget was read */
  headroom: number;
}

const positiveInt = (v: unknown): number | null => (Number.isInteger(v) && (v as number) > 0 ? (v as number) : null);
const numberOf = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) ? v : 0);

/** A run's usage watch: usage reports go in, the watch closes when the run ends. */
export interface UsageWatch {
  onUsage(u: Record<string, unknown>): void;
  close(): void;
}

/**
 * Watches a running run's usage as its runtime reports it: publishes a live event per change with
 * the running totals, keeps the run's usage visible on the run resource, and stops the run when it
 * crosses a per-run cap of the agent's runtimeConfig (`maxCostCents`, `maxTokens`, `maxTurns`,
 * `maxDurationSec`) or when its spend takes the company, agent or project to a hard-stop budget.
 */
@Injectable()
export class RunUsageMonitor {
  private readonly logger = new Logger('RunUsageMonitor');

  constructor(
    private readonly runs: HeartbeatRunsRepository,
    private readonly live: RunLiveEvents,
    private readonly budgets: BudgetUsageService,
  ) {}

  /** `stop` is called once, with the cap or budget crossed. */
  watch(run: RunRecord, agent: EngineAgentRecord, projectId: string | null, stop: (s: RunStop) => void): UsageWatch {
    return new RunWatch(run, agent.runtimeConfig ?? {}, projectId, stop, this.runs, this.live, this.budgets, this.logger);
  }
}

/** One run's watch: its timers, the hard-stop budgets it read, the latest usage, and whether it stopped the run. */
class RunWatch implements UsageWatch {
  private stopped = false;
  private readonly timers = new Set<NodeJS.Timeout>();
  private hardStops: HardStop[] = [];
  private budgetsReadAt = 0;
  private reading: Promise<void> | null = null;
  private latest: Record<string, unknown> | null = null;
  private lastEventAt = 0;
  private eventTimer: NodeJS.Timeout | null = null;
  private persistTimer: NodeJS.Timeout | null = null;
  /** the usage write in flight, and whether a newer usage waits for it */
  private writing: Promise<void> | null = null;
  private rewrite = false;
  private lastPersist = 0;

  constructor(
    private readonly run: RunRecord,
    private readonly rc: Record<string, unknown>,
    private readonly projectId: string | null,
    private readonly stop: (s: RunStop) => void,
    private readonly runs: HeartbeatRunsRepository,
    private readonly live: RunLiveEvents,
    private readonly budgets: BudgetUsageService,
    private readonly logger: Logger,
  ) {
    const maxDuration = positiveInt(rc.maxDurationSec);
    if (maxDuration)
      this.after(maxDuration * 1000, () =>
        this.fire({ code: 'cap_max_duration_sec', message: `run stopped: maxDurationSec ${maxDuration}s reached` }),
      );
    void this.readBudgets();
  }

  onUsage(u: Record<string, unknown>): void {
    if (this.stopped) return;
    const newTurn = numberOf(u.turns) > numberOf(this.latest?.turns);
    this.latest = u;
    // one live event per turn, but a burst of turns (thousands of lines in a second) is joined:
    // at most one event per USAGE_EVENT_MS with the running totals, the last one always sent
    if (u.final === true || Date.now() - this.lastEventAt >= USAGE_EVENT_MS) this.publish(u);
    else this.eventTimer ??= this.after(USAGE_EVENT_MS - (Date.now() - this.lastEventAt), () => this.latest && this.publish(this.latest));
    if (newTurn) this.persist();
    else this.persistTimer ??= this.after(Math.max(0, PERSIST_MS - (Date.now() - this.lastPersist)), () => this.persist());
    this.check(u);
    if (Date.now() - this.budgetsReadAt > BUDGET_REFRESH_MS)
      void this.readBudgets().then(() => !this.stopped && this.latest && this.check(this.latest));
  }

  close(): void {
    // the totals of a joined burst still go out
    if (this.eventTimer && this.latest && !this.stopped) this.publish(this.latest);
    this.stopped = true;
    this.timers.forEach((t) => clearTimeout(t));
    this.timers.clear();
  }

  private fire(s: RunStop): void {
    if (this.stopped) return;
    this.stopped = true;
    this.live.event(this.run, 'cap', s.message, { code: s.code });
    this.stop(s);
  }

  /** The hard-stop budgets of the run's company, agent and project, with what each may still spend. */
  private readBudgets(): Promise<void> {
    const run = this.run;
    const scopes: ScopeRef[] = [
      { scopeType: 'company', scopeId: run.companyId },
      { scopeType: 'agent', scopeId: run.agentId },
      ...(this.projectId ? [{ scopeType: 'project' as const, scopeId: this.projectId }] : []),
    ];
    return (this.reading ??= this.budgets
      .observe(run.companyId, { scopes, activeOnly: true })
      .then((policies) => {
        this.hardStops = policies
          .filter((p) => p.hardStopEnabled && (p.metric === 'billed_cents' || p.metric === 'total_tokens'))
          .map((p) => ({
            scope: `${p.scopeType} ${p.scopeName ?? p.scopeId}`,
            metric: p.metric as HardStop['metric'],
            headroom: p.amount - p.observed,
          }));
        this.budgetsReadAt = Date.now();
      })
      .catch((err: Error) => this.logger.warn(`budgets of run ${run.id} not readable: ${err.message}`))
      .finally(() => (this.reading = null)));
  }

  private publish(u: Record<string, unknown>): void {
    this.clear(this.eventTimer);
    this.eventTimer = null;
    this.lastEventAt = Date.now();
    this.live.event(this.run, 'usage', `turn ${numberOf(u.turns)}: ${numberOf(u.totalTokens)} tokens`, {
      turns: u.turns,
      inputTokens: u.inputTokens,
      cachedInputTokens: u.cachedInputTokens,
      cacheCreationInputTokens: u.cacheCreationInputTokens,
      outputTokens: u.outputTokens,
      totalTokens: u.totalTokens,
      costUsd: u.costUsd,
      costCents: u.costCents,
      costStatus: u.costStatus,
      model: u.model,
    });
  }

  /** Writes the latest usage to the run's row; one write at a time, in order (a newer one waits and writes the latest). */
  private persist(): void {
    this.clear(this.persistTimer);
    this.persistTimer = null;
    this.lastPersist = Date.now();
    if (this.writing) {
      this.rewrite = true;
      return;
    }
    this.writing = (async () => {
      do {
        this.rewrite = false;
        const u = this.latest;
        if (u) await this.runs.setLiveUsage(this.run.companyId, this.run.id, u).catch(() => undefined);
      } while (this.rewrite);
    })().finally(() => (this.writing = null));
  }

  private check(u: Record<string, unknown>): void {
    for (const cap of CAPS) {
      const limit = positiveInt(this.rc[cap.key]);
      const used = numberOf(u[cap.usage]);
      if (limit !== null && used > limit)
        return this.fire({ code: cap.code, message: `run stopped: ${cap.key} ${limit} crossed (${used} ${cap.unit})` });
    }
    for (const h of this.hardStops) {
      const used = h.metric === 'billed_cents' ? numberOf(u.costCents) : numberOf(u.totalTokens);
      if (used > 0 && used >= h.headroom)
        return this.fire({ code: 'budget_hard_stop', message: `run stopped: the ${h.scope} hard-stop budget (${h.metric}) is reached` });
    }
  }

  private after(ms: number, fn: () => void): NodeJS.Timeout {
    const t = setTimeout(() => {
      this.timers.delete(t);
      fn();
    }, ms);
    t.unref();
    this.timers.add(t);
    return t;
  }

  private clear(t: NodeJS.Timeout | null): void {
    if (!t) return;
    clearTimeout(t);
    this.timers.delete(t);
  }
}
