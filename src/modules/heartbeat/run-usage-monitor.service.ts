import { Injectable, Logger } from '@nestjs/common';
import { BudgetUsageService, type ScopeRef } from '../budgets/budget-usage.service';
import { HeartbeatRunsRepository } from './heartbeat-runs.repository';
import type { AgentRow, RunRow } from './heartbeat.types';
import { RunLiveEvents } from './run-live-events';

/** A per-run cap of the agent's runtimeConfig, and the run's stop code when it is crossed. */
const CAPS = [
  { key: 'maxCostCents', code: 'cap_max_cost_cents', usage: 'costCents', unit: 'cents' },
  { key: 'maxTokens', code: 'cap_max_tokens', usage: 'totalTokens', unit: 'tokens' },
  { key: 'maxTurns', code: 'cap_max_turns', usage: 'turns', unit: 'turns' },
] as const;

/** The run's usage is written to its row at most this often (the last update before the end always is). */
const USAGE_EVENT_MS = 100;
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
  watch(
    run: RunRow,
    agent: AgentRow,
    projectId: string | null,
    stop: (s: RunStop) => void,
  ): { onUsage(u: Record<string, unknown>): void; close(): void } {
    const rc = agent.runtime_config ?? {};
    let stopped = false;
    const fire = (s: RunStop) => {
      if (stopped) return;
      stopped = true;
      this.live.event(run, 'cap', s.message, { code: s.code });
      stop(s);
    };
    const timers: NodeJS.Timeout[] = [];
    const maxDuration = positiveInt(rc.maxDurationSec);
    if (maxDuration) {
      const t = setTimeout(
        () => fire({ code: 'cap_max_duration_sec', message: `run stopped: maxDurationSec ${maxDuration}s reached` }),
        maxDuration * 1000,
      );
      t.unref();
      timers.push(t);
    }

    const scopes: ScopeRef[] = [
      { scopeType: 'company', scopeId: run.company_id },
      { scopeType: 'agent', scopeId: run.agent_id },
      ...(projectId ? [{ scopeType: 'project' as const, scopeId: projectId }] : []),
    ];
    let hardStops: HardStop[] = [];
    let budgetsReadAt = 0;
    let reading: Promise<void> | null = null;
    const readBudgets = (): Promise<void> =>
      (reading ??= this.budgets
        .observe(run.company_id, { scopes, activeOnly: true })
        .then((policies) => {
          hardStops = policies
            .filter((p) => p.hardStopEnabled && (p.metric === 'billed_cents' || p.metric === 'total_tokens'))
            .map((p) => ({
              scope: `${p.scopeType} ${p.scopeName ?? p.scopeId}`,
              metric: p.metric as HardStop['metric'],
              headroom: p.amount - p.observed,
            }));
          budgetsReadAt = Date.now();
        })
        .catch((err: Error) => this.logger.warn(`budgets of run ${run.id} not readable: ${err.message}`))
        .finally(() => (reading = null)));
    void readBudgets();

    let latest: Record<string, unknown> | null = null;
    let lastEventAt = 0;
    let eventTimer: NodeJS.Timeout | null = null;
    const publish = (u: Record<string, unknown>) => {
      if (eventTimer) clearTimeout(eventTimer);
      eventTimer = null;
      lastEventAt = Date.now();
      this.live.event(run, 'usage', `turn ${numberOf(u.turns)}: ${numberOf(u.totalTokens)} tokens`, {
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
    };
    let persistTimer: NodeJS.Timeout | null = null;
    let lastPersist = 0;
    const persist = () => {
      persistTimer = null;
      lastPersist = Date.now();
      if (latest) void this.runs.setLiveUsage(run.company_id, run.id, latest).catch(() => undefined);
    };

    const check = (u: Record<string, unknown>) => {
      for (const cap of CAPS) {
        const limit = positiveInt(rc[cap.key]);
        const used = numberOf(u[cap.usage]);
        if (limit !== null && used > limit)
          return fire({ code: cap.code, message: `run stopped: ${cap.key} ${limit} crossed (${used} ${cap.unit})` });
      }
      for (const h of hardStops) {
        const used = h.metric === 'billed_cents' ? numberOf(u.costCents) : numberOf(u.totalTokens);
        if (used > 0 && used >= h.headroom)
          return fire({ code: 'budget_hard_stop', message: `run stopped: the ${h.scope} hard-stop budget (${h.metric}) is reached` });
      }
    };

    return {
      onUsage: (u) => {
        if (stopped) return;
        latest = u;
        // one live event per turn, but a burst of turns (thousands of lines in a second) is joined:
        // at most one event per USAGE_EVENT_MS with the running totals, the last one always sent
        if (u.final === true || Date.now() - lastEventAt >= USAGE_EVENT_MS) publish(u);
        else eventTimer ??= setTimeout(() => latest && publish(latest), USAGE_EVENT_MS - (Date.now() - lastEventAt));
        if (!persistTimer) persistTimer = setTimeout(persist, Math.max(0, PERSIST_MS - (Date.now() - lastPersist)));
        check(u);
        if (Date.now() - budgetsReadAt > BUDGET_REFRESH_MS) void readBudgets().then(() => !stopped && latest && check(latest));
      },
      close: () => {
        // the totals of a joined burst still go out
        if (eventTimer && latest && !stopped) publish(latest);
        if (eventTimer) clearTimeout(eventTimer);
        stopped = true;
        timers.forEach((t) => clearTimeout(t));
        if (persistTimer) clearTimeout(persistTimer);
      },
    };
  }
}
