import { Injectable } from '@nestjs/common';
import type { Actor } from '../../common/auth/actor';
import { ActivityRecorder } from '../../common/activity/activity-recorder.service';
import type { CancellationScope } from '../../common/events/work-cancellation.port';
import { Db } from '../../database/db.service';
import { HeartbeatAgents } from './heartbeat-agents.port';
import { IssueHolds } from './issue-holds.port';
import { RunGatesRepository } from './run-gates.repository';
import { HeartbeatRunsRepository } from './heartbeat-runs.repository';
import type { RunOutcome, WakeContext } from '../adapters/run.types';
import type { EngineAgentRecord, RunRecord } from './heartbeat.types';
import { RunLifecycleEvents } from './run-lifecycle-events.port';
import { RunLogService } from './run-log.service';
import { RunLiveEvents } from './run-live-events';
import { recordRunActivity } from './run-store';
import { scopeFilter, WakeRecord, WakeupRequestsRepository } from './wakeup-requests.repository';

export interface FinishOptions {
  actor?: Actor;
  logBytes?: number;
  /** the run's agent when the caller knows it (saves a lookup) */
  agentId?: string;
  /** the reaper: only end the run if its lease is (still) expired */
  onlyIfLeaseExpired?: boolean;
  /** scope cancellation: deferred wakes of the scope were cancelled, nothing to promote */
  promote?: boolean;
  /** the run was cancelled for this reason (a budget hard stop, a pause): its wake is recorded as cancelled with it, not completed */
  wakeCancelReason?: string;
}

const commentIdOf = (payload: Record<string, unknown>): string | null => (typeof payload.commentId === 'string' ? payload.commentId : null);

/** The context snapshot of a run created for a wake. */
export function contextForWake(w: WakeRecord): WakeContext {
  return {
    source: w.source,
    triggerDetail: w.triggerDetail,
    reason: w.reason,
    payload: w.payload ?? {},
    issueId: w.issueId,
    commentId: commentIdOf(w.payload ?? {}),
    forceFreshSession: w.forceFreshSession,
    wakeupRequestIds: [w.id],
  };
}

/**
 * Creating and ending runs, and what follows from an end: wake rows completed, the agent's status,
 * deferred wakes of the same agent and issue promoted to a new run, activity, lifecycle events.
 * Every method runs in the caller's transaction (or opens one) and takes the agent lock first.
 */
@Injectable()
export class RunLifecycle {
  private readonly queuedListeners: Array<() => void> = [];
  private readonly endedHooks: Array<(run: RunRecord) => Promise<void>> = [];

  constructor(
    private readonly db: Db,
    private readonly recorder: ActivityRecorder,
    private readonly events: RunLifecycleEvents,
    private readonly logs: RunLogService,
    private readonly holds: IssueHolds,
    private readonly live: RunLiveEvents,
    private readonly runs: HeartbeatRunsRepository,
    private readonly wakes: WakeupRequestsRepository,
    private readonly agents: HeartbeatAgents,
    private readonly gates: RunGatesRepository,
  ) {}

  onRunQueued(listener: () => void): void {
    this.queuedListeners.push(listener);
  }

  /** Called in the transaction that ends a run (agent lock held), before deferred wakes are promoted (e.g. re-queueing a lost run). */
  onRunEnded(hook: (run: RunRecord) => Promise<void>): void {
    this.endedHooks.push(hook);
  }

  /** The id of the hold pausing the issue (on it or an ancestor), or null. */
  issueHold(issueId: string): Promise<string | null> {
    return this.holds.holdOf(issueId);
  }

  /** A queued run for a wake (already inserted); the dispatcher hears of it after commit. Caller holds the agent lock. */
  async createRun(agent: EngineAgentRecord, wake: WakeRecord, context: WakeContext): Promise<RunRecord> {
    const run = await this.runs.insertQueued(agent, wake, context);
    await this.wakes.markClaimed(run.companyId, wake.id, run.id);
    await recordRunActivity(this.recorder, 'heartbeat.run_queued', run, {
      source: wake.source,
      triggerDetail: wake.triggerDetail,
      reason: wake.reason,
      issueId: wake.issueId,
    });
    this.db.afterCommit(() => this.queuedListeners.forEach((l) => l()));
    this.live.queued(run);
    await this.live.signalQueued();
    return run;
  }

  /** Ends a live run (no-op if it already ended). Returns the ended row, or null. */
  async finishRun(runId: string, outcome: RunOutcome, opts: FinishOptions = {}): Promise<RunRecord | null> {
    return this.db.transaction(async () => {
      const ref = await this.runs.refOf(runId);
      if (!ref) return null;
      const agentId = opts.agentId ?? ref.agentId;
      await this.agents.lock(ref.companyId, agentId);
      const run = await this.runs.finish(ref.companyId, runId, outcome, {
        agentId,
        logBytes: opts.logBytes ?? 0,
        onlyIfLeaseExpired: opts.onlyIfLeaseExpired,
      });
      if (!run) {
        if (opts.logBytes) await this.runs.raiseLogBytes(ref.companyId, runId, opts.logBytes);
        return null;
      }
      await this.wakes.settleForRun(run.companyId, runId, opts.wakeCancelReason ?? null);
      const failed = run.status === 'failed' || run.status === 'timed_out';
      // the agent lock is held and only a claim (under that lock) makes a run `running`: no run starts in between
      const agentChanged =
        !(await this.runs.anyRunning(run.companyId, run.agentId)) &&
        (await this.agents.settleIfRunning(run.companyId, run.agentId, failed ? 'error' : 'idle'));
      this.live.status(run);
      this.live.event(run, 'lifecycle', `run ${run.status}`, { status: run.status, exitCode: run.exitCode, errorCode: run.errorCode });
      if (agentChanged) this.live.agentStatus(run.companyId, run.agentId, failed ? 'error' : 'idle', run.status);
      await recordRunActivity(
        this.recorder,
        `heartbeat.run_${run.status}`,
        run,
        {
          status: run.status,
          errorCode: run.errorCode,
          error: run.error,
          exitCode: run.exitCode,
        },
        opts.actor,
      );
      for (const hook of this.endedHooks) await hook(run);
      if (opts.promote !== false) await this.promoteDeferred(run.companyId, run.agentId, run.issueId);
      this.db.afterCommit(() =>
        this.events.emitFinished({
          runId: run.id,
          companyId: run.companyId,
          agentId: run.agentId,
          issueId: run.issueId,
          status: run.status as RunOutcome['status'],
          errorCode: run.errorCode,
          usage: run.usageJson,
          result: run.resultJson,
          createdAt: run.createdAt,
          startedAt: run.startedAt,
          finishedAt: run.finishedAt,
        }),
      );
      return run;
    });
  }

  /**
   * A run ended elsewhere (cancelled, paused, reaped) while its process still ran here: the usage
   * the process reported to its end replaces the run's stored usage, and the costs module books
   * what it adds (a model call that completed after the stop is still the run's).
   */
  async settleUsage(runId: string, companyId: string, usage: Record<string, unknown> | null | undefined): Promise<void> {
    if (!usage || !(Number(usage.totalTokens) > 0 || Number(usage.costCents) > 0)) return;
    const run = await this.runs.settleUsage(companyId, runId, usage);
    if (!run) return;
    await this.events.emitUsageSettled({ runId, companyId, agentId: run.agentId, issueId: run.issueId, usage });
  }

  /**
   * Deferred wakes of one agent and issue become one new run once no run of that agent is live on
   * that issue: the oldest wake owns the run, the others are coalesced into it. Caller holds the agent lock.
   */
  async promoteDeferred(companyId: string, agentId: string, issueId: string | null): Promise<RunRecord | null> {
    if (!issueId) return null;
    const wakes = await this.wakes.deferredOf(companyId, agentId, issueId);
    if (wakes.length === 0) return null;
    // a paused subtree keeps its wakes deferred until the hold is released (which promotes them)
    if (await this.issueHold(issueId)) return null;
    if (await this.runs.hasLiveOnIssue(companyId, agentId, issueId)) return null;
    const agent = await this.agents.lock(companyId, agentId);
    if (!agent) return null;
    const [first, ...rest] = wakes;
    const context = contextForWake(first);
    context.wakeupRequestIds = wakes.map((w) => w.id);
    context.promotedFromDeferred = true;
    if (rest.length) {
      context.coalesced = rest.map((w) => ({ wakeupRequestId: w.id, source: w.source, reason: w.reason, payload: w.payload }));
      const latestComment = [...wakes]
        .reverse()
        .map((w) => commentIdOf(w.payload))
        .find((c) => c);
      if (latestComment) context.commentId = latestComment;
    }
    const run = await this.createRun(agent, first, context);
    if (rest.length) {
      await this.wakes.markManyCoalesced(
        run.companyId,
        rest.map((w) => w.id),
        run.id,
      );
    }
    return run;
  }

  /** The reaper's sweep: deferred wakes whose agent has no live run on their issue any more. */
  async promoteStrandedDeferred(): Promise<number> {
    const pairs = await this.wakes.strandedDeferredPairs();
    let n = 0;
    for (const p of pairs) {
      const run = await this.db.transaction(async () => {
        await this.agents.lock(p.companyId, p.agentId);
        return this.promoteDeferred(p.companyId, p.agentId, p.issueId);
      });
      if (run) n++;
    }
    return n;
  }

  /**
   * WorkCancellation: a paused or stopped scope loses its queued and deferred wakes and its live
   * runs (in the caller's transaction); processes are killed once it commits (run-finished event).
   */
  async cancelScope(scope: CancellationScope, reason: string): Promise<void> {
    // the issues table belongs to another module (absent in some set-ups): asked only when a project is named
    const filter = scopeFilter(scope, scope.projectId ? await this.gates.issuesTableExists() : false);
    await this.wakes.cancelInScope(filter, reason);
    const runs = await this.runs.liveIdsInScope(filter);
    for (const r of runs) {
      await this.finishRun(
        r.id,
        { status: 'cancelled', errorCode: 'scope_cancelled', error: `cancelled: ${reason}` },
        { promote: false, wakeCancelReason: reason },
      );
    }
  }

  logPathFor(companyId: string, runId: string): string {
    return this.logs.relativePath(companyId, runId);
  }
}
