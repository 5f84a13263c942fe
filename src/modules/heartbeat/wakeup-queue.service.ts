import { Injectable } from '@nestjs/common';
import type { Actor } from '../../common/auth/actor';
import { ActivityRecorder } from '../../common/activity/activity-recorder.service';
import { notFound } from '../../common/errors/domain-error';
import { isUuid } from '../../common/http/uuid';
import { AppConfig } from '../../config/app-config';
import { Db } from '../../database/db.service';
import { BudgetGate } from '../budgets/budget-gate.service';
import { HeartbeatAgents } from './heartbeat-agents.port';
import { RunGatesRepository } from './run-gates.repository';
import { HeartbeatRunsRepository } from './heartbeat-runs.repository';
import type { WakeContext } from '../adapters/run.types';
import { EngineAgentRecord, heartbeatPolicy, RunRecord } from './heartbeat.types';
import { contextForWake, RunLifecycle } from './run-lifecycle.service';
import { NOT_RUNNABLE_AGENT_STATUSES } from './run-store';
import { StoredWake, WakeRecord, WakeupRequestsRepository } from './wakeup-requests.repository';

export type WakeupSource = 'timer' | 'assignment' | 'on_demand' | 'automation';
export type WakeupTriggerDetail = 'manual' | 'ping' | 'callback' | 'system';

export interface WakeupInput {
  companyId: string;
  agentId: string;
  source: WakeupSource;
  triggerDetail?: WakeupTriggerDetail | null;
  reason?: string | null;
  /** e.g. `{ issueId, commentId }` */
  payload?: Record<string, unknown>;
  issueId?: string | null;
  idempotencyKey?: string | null;
  forceFreshSession?: boolean;
  requestedBy?: Actor;
  /** the agent that wrote the comment behind this wake, if any: an agent's own comment never wakes it */
  commentAuthorAgentId?: string | null;
}

export type WakeupOutcome = 'queued' | 'coalesced' | 'deferred' | 'skipped';

export interface WakeupResult {
  wakeupId: string;
  /** queued: a new run; coalesced: merged into a queued (or, for timers, live) run; deferred: runs after the live run on the issue ends */
  status: WakeupOutcome;
  /** the run that will handle the wake (for deferred: the live run it waits for) */
  run?: RunRecord;
  skipReason?: string;
  /** the idempotency key matched an earlier wake; this is that wake's result */
  replayed?: boolean;
  /** deferred because the issue's subtree is paused: the hold's id (the wake runs once it is released) */
  heldBy?: string;
}

/** What a wake names, read once from its input. */
interface WakeFields {
  payload: Record<string, unknown>;
  issueId: string | null;
  key: string | null;
}

function wakeOf(input: WakeupInput): WakeFields {
  const payload = input.payload ?? {};
  return { payload, issueId: input.issueId ?? (isUuid(payload.issueId) ? payload.issueId : null), key: input.idempotencyKey ?? null };
}

/** Answers whether an agent has work a timer wake should look at (issues module registers one). */
export type ActionableWorkProbe = (agent: { id: string; companyId: string }) => Promise<boolean>;

/**
 * The heartbeat engine's enqueue API: every wakeup (comments, mentions, assignments, blockers,
 * timers, manual) is a durable row, decided under the agent lock: replayed (idempotency key),
 * skipped (agent not runnable, own comment, policy, budget, loop breaker, idle timer), coalesced
 * into a queued run, deferred behind the live run on the same issue, or queued as a new run.
 */
@Injectable()
export class WakeupQueue {
  private readonly skipChecks: Array<(adapterType: string) => Promise<string | null>> = [];

  /** Another module's reason to skip a wake by the agent's adapter type (e.g. a force-disabled adapter: `adapter_disabled`). */
  registerSkipCheck(check: (adapterType: string) => Promise<string | null>): void {
    this.skipChecks.push(check);
  }

  private readonly probes: ActionableWorkProbe[] = [];

  constructor(
    private readonly db: Db,
    private readonly config: AppConfig,
    private readonly lifecycle: RunLifecycle,
    private readonly recorder: ActivityRecorder,
    private readonly budgetGate: BudgetGate,
    private readonly runs: HeartbeatRunsRepository,
    private readonly wakes: WakeupRequestsRepository,
    private readonly agents: HeartbeatAgents,
    private readonly gates: RunGatesRepository,
  ) {}

  /** Called (after commit) whenever a run is queued, so a dispatcher can act at once. */
  onQueued(listener: () => void): void {
    this.lifecycle.onRunQueued(listener);
  }

  /** A hold was released: deferred wakes of these issues become runs (per agent and issue, as when a live run ends). */
  async promoteDeferredOfIssues(issueIds: string[]): Promise<number> {
    if (issueIds.length === 0) return 0;
    const pairs = await this.wakes.deferredPairsOfIssues(issueIds);
    let n = 0;
    for (const p of pairs) {
      const run = await this.db.transaction(async () => {
        await this.agents.lock(p.companyId, p.agentId);
        return this.lifecycle.promoteDeferred(p.companyId, p.agentId, p.issueId);
      });
      if (run) n++;
    }
    return n;
  }

  /** Replaces the built-in idle check of timer wakes (which reads the issues table if present). */
  registerActionableWorkProbe(probe: ActionableWorkProbe): void {
    this.probes.push(probe);
  }

  /**
   * A wake, decided under the agent lock in one transaction, as a sequence of small decisions:
   * replayed (its idempotency key was seen), gated (skipped: the agent, policy, budget, loop, idle),
   * held (its issue's subtree is paused), joined (coalesced into a live run, or deferred behind the
   * one on its issue), or created as a new run; every outcome is recorded.
   */
  async enqueue(input: WakeupInput): Promise<WakeupResult> {
    return this.db.transaction(async () => {
      const agent = await this.lockedAgent(input);
      const w = wakeOf(input);
      const replayed = w.key ? await this.replayed(agent, w.key) : null;
      if (replayed) return replayed;
      const skipReason = await this.skipReason(agent, input, w.issueId, w.payload);
      const wake = await this.insertWake(agent, input, w, skipReason);
      if (skipReason) return this.skipped(agent, input, wake, w, skipReason);
      return (await this.held(agent, input, wake, w)) ?? (await this.joined(agent, input, wake, w)) ?? this.created(agent, wake);
    });
  }

  /** The wake's agent, locked (the engine's per-agent mutex); 404 when it is not the company's. */
  private async lockedAgent(input: WakeupInput): Promise<EngineAgentRecord> {
    const agent = isUuid(input.companyId) ? await this.agents.lock(input.companyId, input.agentId) : null;
    if (!agent || agent.companyId !== input.companyId) throw notFound('Agent');
    return agent;
  }

  /** An earlier wake with the same idempotency key: its result again. */
  private async replayed(agent: EngineAgentRecord, key: string): Promise<WakeupResult | null> {
    const prior = await this.wakes.findByIdempotencyKey(agent.companyId, agent.id, key);
    return prior ? this.replay(agent.companyId, prior) : null;
  }

  /** The durable row of the wake: queued, or skipped with its reason. */
  private insertWake(agent: EngineAgentRecord, input: WakeupInput, w: WakeFields, skipReason: string | null): Promise<WakeRecord> {
    const actor = input.requestedBy;
    return this.wakes.insert({
      companyId: agent.companyId,
      agentId: agent.id,
      source: input.source,
      triggerDetail: input.triggerDetail ?? null,
      reason: input.reason ?? null,
      payload: w.payload,
      issueId: w.issueId,
      idempotencyKey: w.key,
      forceFreshSession: input.forceFreshSession ?? false,
      status: skipReason ? 'skipped' : 'queued',
      skipReason,
      requestedByActorType: actor ? (actor.kind === 'agent' ? 'agent' : 'user') : 'system',
      requestedByActorId: actor ? (actor.kind === 'agent' ? actor.agentId : actor.userId) : 'system',
    });
  }

  private async skipped(
    agent: EngineAgentRecord,
    input: WakeupInput,
    wake: WakeRecord,
    w: WakeFields,
    skipReason: string,
  ): Promise<WakeupResult> {
    const action = skipReason === 'wake_loop_suppressed' ? 'heartbeat.wake_loop_suppressed' : 'heartbeat.wakeup_skipped';
    const details = { source: input.source, reason: input.reason ?? null, issueId: w.issueId, skipReason };
    await this.recordWake(action, agent, wake.id, details, input.requestedBy);
    return { wakeupId: wake.id, status: 'skipped', skipReason };
  }

  /** A wake for an issue whose subtree is paused waits (deferred) until the hold is released. */
  private async held(agent: EngineAgentRecord, input: WakeupInput, wake: WakeRecord, w: WakeFields): Promise<WakeupResult | null> {
    const heldBy = w.issueId ? await this.lifecycle.issueHold(w.issueId) : null;
    if (!heldBy) return null;
    await this.wakes.markDeferred(agent.companyId, wake.id);
    const details = { heldBy, deferReason: 'issue_tree_held', source: input.source, issueId: w.issueId };
    await this.recordWake('heartbeat.wakeup_deferred', agent, wake.id, details, input.requestedBy);
    return { wakeupId: wake.id, status: 'deferred', heldBy };
  }

  /**
   * A live run the wake joins: coalesced into it while it is queued (or any live run, for a timer), or
   * deferred behind the one on its issue (never two concurrent runs of one agent on one issue).
   */
  private async joined(agent: EngineAgentRecord, input: WakeupInput, wake: WakeRecord, w: WakeFields): Promise<WakeupResult | null> {
    const live = await this.liveRunToJoin(agent.companyId, agent.id, input.source, w.issueId);
    if (!live) return null;
    const actor = input.requestedBy;
    if (live.status === 'queued' || input.source === 'timer') {
      await this.coalesce(live, wake.id, contextForWake(wake));
      await this.recordWake(
        'heartbeat.wakeup_coalesced',
        agent,
        wake.id,
        { runId: live.id, source: input.source, issueId: w.issueId },
        actor,
      );
      return { wakeupId: wake.id, status: 'coalesced', run: (await this.reload(agent.companyId, live.id)) ?? live };
    }
    if (!w.issueId) return null;
    await this.wakes.markDeferred(agent.companyId, wake.id);
    const details = { waitingForRunId: live.id, source: input.source, issueId: w.issueId };
    await this.recordWake('heartbeat.wakeup_deferred', agent, wake.id, details, actor);
    return { wakeupId: wake.id, status: 'deferred', run: live };
  }

  /** A new queued run for the wake (its activity and live events are recorded by the lifecycle). */
  private async created(agent: EngineAgentRecord, wake: WakeRecord): Promise<WakeupResult> {
    const run = await this.lifecycle.createRun(agent, wake, contextForWake(wake));
    return { wakeupId: wake.id, status: 'queued', run };
  }

  /** Why this wake must not run, or null. Order: the agent, the own-comment rule, policy, budget, loop, idleness. */
  private async skipReason(
    agent: EngineAgentRecord,
    input: WakeupInput,
    issueId: string | null,
    payload: Record<string, unknown>,
  ): Promise<string | null> {
    if (NOT_RUNNABLE_AGENT_STATUSES.includes(agent.status)) return `agent_${agent.status}`;
    for (const check of this.skipChecks) {
      const reason = await check(agent.adapterType);
      if (reason) return reason;
    }
    const author =
      input.commentAuthorAgentId ??
      (input.requestedBy?.kind === 'agent' && typeof payload.commentId === 'string' ? input.requestedBy.agentId : null);
    if (author === agent.id) return 'self_comment';
    const policy = heartbeatPolicy(agent.runtimeConfig);
    if (input.source === 'timer' && !policy.enabled) return 'heartbeat_disabled';
    if (input.source !== 'timer' && !policy.wakeOnDemand) return 'wake_on_demand_disabled';
    const blocked = await this.budgetOrCompanyBlock(agent, typeof payload.projectId === 'string' ? payload.projectId : null);
    if (blocked) return blocked;
    if (issueId) {
      const recent = await this.wakes.countRecentOnIssue(agent.companyId, agent.id, issueId, this.config.heartbeat.wakeLoopWindowSec);
      if (recent >= this.config.heartbeat.wakeLoopLimit) return 'wake_loop_suppressed';
    }
    if (input.source === 'timer' && policy.skipWhenIdle && !(await this.hasActionableWork(agent))) return 'no_actionable_work';
    return null;
  }

  /** A scope held by a hard budget incident or at its hard limit (BudgetGate), or over its monthly budget: `budget`. */
  private async budgetOrCompanyBlock(agent: EngineAgentRecord, projectId: string | null): Promise<string | null> {
    if (agent.budgetMonthlyCents > 0 && agent.spentMonthlyCents >= agent.budgetMonthlyCents) return 'budget';
    if (!(await this.budgetGate.checkBeforeRun(agent.companyId, agent.id, projectId)).allowed) return 'budget';
    const co = await this.gates.companyRunGate(agent.companyId);
    if (co?.over) return 'budget';
    if (co && co.status !== 'active') return `company_${co.status}`;
    return null;
  }

  /** Assigned todo/in_progress issues (read from the issues table when it exists), or a registered probe. */
  private async hasActionableWork(agent: EngineAgentRecord): Promise<boolean> {
    if (this.probes.length) {
      for (const p of this.probes) if (await p({ id: agent.id, companyId: agent.companyId })) return true;
      return false;
    }
    if (!(await this.gates.issuesTableExists())) return false;
    return this.gates.hasOpenAssignedIssue(agent.companyId, agent.id);
  }

  /**
   * The run a new wake joins. Issue wakes: the agent's live run on that issue. Timer wakes: any
   * live run of the agent. Other wakes: a run of the agent without an issue that has not started yet.
   */
  private async liveRunToJoin(companyId: string, agentId: string, source: string, issueId: string | null): Promise<RunRecord | null> {
    return issueId
      ? this.runs.oldestLiveOnIssue(companyId, agentId, issueId)
      : source === 'timer'
        ? this.runs.oldestLiveOfAgent(companyId, agentId)
        : this.runs.oldestQueuedWithoutIssue(companyId, agentId);
  }

  /** Merges a wake into a live run's context: the newest comment wins, every wake is listed. */
  private async coalesce(run: RunRecord, wakeId: string, context: WakeContext): Promise<void> {
    const entry = { wakeupRequestId: wakeId, source: context.source, reason: context.reason, payload: context.payload };
    await this.runs.coalesceWake(run.companyId, run.id, wakeId, entry, context.commentId);
    await this.wakes.markCoalesced(run.companyId, wakeId, run.id);
  }

  private async replay(companyId: string, prior: StoredWake): Promise<WakeupResult> {
    const run = prior.runId ? await this.reload(companyId, prior.runId) : null;
    if (prior.status === 'skipped' || prior.status === 'cancelled') {
      return { wakeupId: prior.id, status: 'skipped', skipReason: prior.skipReason ?? prior.status, replayed: true };
    }
    if (prior.status === 'deferred' && prior.issueId) {
      const live = await this.runs.liveForDeferredWake(companyId, prior.id, prior.issueId);
      return { wakeupId: prior.id, status: 'deferred', run: live, replayed: true };
    }
    return { wakeupId: prior.id, status: prior.status === 'coalesced' ? 'coalesced' : 'queued', run: run ?? undefined, replayed: true };
  }

  private async reload(companyId: string, runId: string): Promise<RunRecord | null> {
    return this.runs.findById(companyId, runId);
  }

  private recordWake(action: string, agent: EngineAgentRecord, wakeId: string, details: Record<string, unknown>, actor?: Actor) {
    return this.recorder.record({
      companyId: agent.companyId,
      action,
      entityType: 'agent_wakeup_request',
      entityId: wakeId,
      actor,
      agentId: agent.id,
      runId: null,
      details,
    });
  }
}
