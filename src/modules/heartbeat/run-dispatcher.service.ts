import { Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { isDeadLocalOwner } from '../../common/process/process-groups';
import { ActivityRecorder } from '../../common/activity/activity-recorder.service';
import { AppConfig } from '../../config/app-config';
import { Db } from '../../database/db.service';
import { BudgetGate } from '../budgets/budget-gate.service';
import { HeartbeatAgents } from './heartbeat-agents.port';
import { RunClaimsRepository } from './run-claims.repository';
import { EngineAgentRecord, heartbeatPolicy, RunRecord } from './heartbeat.types';
import { LocalRun, RunExecutor } from './run-executor.service';
import { RunLifecycleEvents } from './run-lifecycle-events.port';
import { RunLifecycle } from './run-lifecycle.service';
import { RunProcessGroups } from './run-process-groups.service';
import { LiveEventHub } from '../../common/events/live-event-hub';
import { RUN_QUEUED_CHANNEL, RunLiveEvents } from './run-live-events';
import { NOT_RUNNABLE_AGENT_STATUSES, recordRunActivity } from './run-store';
import { runClaimed } from '../../common/tracing/run-tracing';

const CLAIM_PARALLELISM = 6;
/** at shutdown, how long the runs handed back get to end on their SIGTERM, then on their SIGKILL */
const SHUTDOWN_TERM_WAIT_MS = 2000;
const SHUTDOWN_KILL_WAIT_MS = 1000;

/** Whether a lease owner id (`host-pid[-suffix]`) names a process of this host that is gone. */
export { isDeadLocalOwner };

/**
 * Claims queued runs and executes them on this instance. Claims are row-locked in the database
 * (agent lock, then a conditional queued -> running update), so any number of instances can share
 * one database without running a run twice, and an agent never exceeds its concurrency limit.
 * Claimed runs hold a lease this instance renews; a run ended elsewhere (cancelled, completed,
 * reaped) is stopped here at the next keepalive.
 */
@Injectable()
export class RunDispatcher implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('RunDispatcher');
  private readonly local = new Map<string, LocalRun>();
  private draining = false;
  /** the dispatch loop in flight (kick): the shutdown waits for it, so that no claim outlives it */
  private dispatching: Promise<void> | null = null;
  private again = false;
  private stopping = false;
  /** draining before a shutdown: no new claims, live runs go on */
  private claimsStopped = false;
  private keepalive?: NodeJS.Timeout;

  constructor(
    private readonly db: Db,
    private readonly config: AppConfig,
    private readonly lifecycle: RunLifecycle,
    private readonly events: RunLifecycleEvents,
    private readonly executor: RunExecutor,
    private readonly recorder: ActivityRecorder,
    private readonly budgetGate: BudgetGate,
    private readonly processGroups: RunProcessGroups,
    private readonly live: RunLiveEvents,
    private readonly hub: LiveEventHub,
    private readonly runs: RunClaimsRepository,
    private readonly agents: HeartbeatAgents,
  ) {}

  get instanceId(): string {
    return this.config.heartbeat.instanceId;
  }

  async onApplicationBootstrap(): Promise<void> {
    this.lifecycle.onRunQueued(() => this.kick());
    // runs queued on other instances (NOTIFY with their COMMIT): no waiting for the next tick
    this.hub.onNotification(RUN_QUEUED_CHANNEL, () => this.kick());
    void this.hub.start().catch((err) => this.logger.warn(`live event listener not started: ${(err as Error).message}`));
    this.events.onRunFinished((e) => {
      this.local.get(e.runId)?.cancel(`run ${e.status}`);
      this.kick();
    });
    this.keepalive = setInterval(() => void this.renewLeases(), this.config.heartbeat.keepaliveMs);
    this.keepalive.unref();
    await this.reapOwnOrphans().catch((err) => this.logger.error(`start-up orphan reaping failed: ${(err as Error).message}`));
    this.kick();
  }

  async onApplicationShutdown(): Promise<void> {
    this.stopping = true;
    if (this.keepalive) clearInterval(this.keepalive);
    // a claim in flight commits first; the loop then hands its run back instead of starting it
    if (this.dispatching) await Promise.race([this.dispatching, new Promise((res) => setTimeout(res, 5000).unref())]);
    const runs = [...this.local.values()];
    for (const r of runs) {
      await this.handBack(r.runId, r.logBytes());
      r.cancel('instance_shutdown');
    }
    const ended = Promise.all(runs.map((r) => r.done.catch(() => undefined)));
    await Promise.race([ended, new Promise((res) => setTimeout(res, SHUTDOWN_TERM_WAIT_MS).unref())]);
    // a process still in its grace period would outlive the instance's shutdown (in production its
    // exit takes it along; an embedding process, a test worker, keeps running): SIGKILL what is left
    for (const r of runs) r.cancel('instance_shutdown', 0);
    await Promise.race([ended, new Promise((res) => setTimeout(res, SHUTDOWN_KILL_WAIT_MS).unref())]);
  }

  /** A run this instance will not execute because it is shutting down: failed as instance_shutdown (retried once). */
  private handBack(runId: string, logBytes: number): Promise<unknown> {
    return this.lifecycle
      .finishRun(
        runId,
        { status: 'failed', errorCode: 'instance_shutdown', error: 'the service instance running it shut down' },
        { logBytes },
      )
      .catch(() => undefined);
  }

  /**
   * Graceful drain (SIGTERM): stop claiming, then wait up to `graceMs` (or until `abort` resolves)
   * for the runs executing here to finish on their own; what is still running after that is handed
   * back by the shutdown as before. Resolves with the number of runs still running.
   */
  async drain(graceMs: number, abort?: Promise<unknown>): Promise<number> {
    this.claimsStopped = true;
    if (this.local.size === 0 || graceMs <= 0) return this.local.size;
    this.logger.log(
      `draining: no new runs are claimed; waiting up to ${Math.round(graceMs / 1000)} s for ${this.local.size} live runs to finish`,
    );
    let timer: NodeJS.Timeout | undefined;
    let over = false;
    const deadline = new Promise<void>((r) => (timer = setTimeout(r, graceMs))).then(() => (over = true));
    void abort?.then(() => (over = true));
    // a claim that was in flight when the drain began may still add a run: wait for whatever runs here
    while (this.local.size > 0 && !over) {
      await Promise.race([
        Promise.all([...this.local.values()].map((r) => r.done.catch(() => undefined))),
        deadline,
        ...(abort ? [abort] : []),
      ]);
    }
    clearTimeout(timer);
    const left = this.local.size;
    if (left)
      this.logger.warn(`drain ended with ${left} runs still running: they are handed back (failed as instance_shutdown, retried once)`);
    else this.logger.log('drained: every live run finished');
    return left;
  }

  /** Runs currently executing here. */
  localRunIds(): string[] {
    return [...this.local.keys()];
  }

  /** Cancels a run executing on this instance (no-op elsewhere; the owner notices at keepalive). */
  cancelLocal(runId: string, reason: string): void {
    this.local.get(runId)?.cancel(reason);
  }

  /** Claim and start queued runs until none is claimable or local capacity is reached. */
  kick(): void {
    if (this.stopping || this.claimsStopped) return;
    if (this.draining) {
      this.again = true;
      return;
    }
    this.draining = true;
    this.dispatching = (async () => {
      try {
        do {
          this.again = false;
          while (!this.stopping && !this.claimsStopped && this.local.size < this.config.heartbeat.maxLocalRuns) {
            const claimed = await this.claimBatch(this.config.heartbeat.maxLocalRuns - this.local.size);
            if (claimed === 0) break;
          }
        } while (this.again && !this.stopping && !this.claimsStopped);
      } catch (err) {
        if (!this.stopping) this.logger.error(`dispatch failed: ${(err as Error).message}`);
      } finally {
        this.draining = false;
        this.dispatching = null;
      }
    })();
  }

  private start({ run, agent }: { run: RunRecord; agent: EngineAgentRecord }): void {
    runClaimed(run, this.instanceId);
    const local = this.executor.launch(run, agent, () => this.stopping);
    this.local.set(run.id, local);
    void local.done.finally(() => {
      this.local.delete(run.id);
      this.kick();
    });
  }

  /**
   * Claims up to `room` of the oldest queued runs whose agents are under their concurrency limit,
   * one per agent per pass, a few at a time in parallel (each claim is its own short transaction
   * under that agent's lock). Returns how many were claimed and started.
   */
  private async claimBatch(room: number): Promise<number> {
    const candidates = await this.runs.claimCandidates(Math.max(1, Math.min(room, 64)));
    let claimed = 0;
    const queue = [...candidates];
    const worker = async () => {
      for (let c = queue.shift(); c && !this.stopping && !this.claimsStopped; c = queue.shift()) {
        const claim = await this.db.transaction(() => this.tryClaim(c.companyId, c.id, c.agentId));
        // claimed while the instance began shutting down: handed back, no process started for it
        if (claim && this.stopping) await this.handBack(claim.run.id, 0);
        else if (claim) {
          claimed++;
          this.start(claim);
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(CLAIM_PARALLELISM, queue.length) }, worker));
    return claimed;
  }

  private async tryClaim(companyId: string, runId: string, agentId: string): Promise<{ run: RunRecord; agent: EngineAgentRecord } | null> {
    const agent = await this.agents.lock(companyId, agentId);
    if (!agent) return null;
    if (NOT_RUNNABLE_AGENT_STATUSES.includes(agent.status)) {
      await this.lifecycle.finishRun(
        runId,
        { status: 'cancelled', errorCode: 'agent_not_runnable', error: `agent is ${agent.status}` },
        { agentId, promote: false },
      );
      return null;
    }
    // a run never starts for a scope already over its hard limit (budget check before each claim)
    const queued = await this.runs.queuedForClaim(agent.companyId, runId);
    if (!queued) return null;
    const projectId = typeof queued.contextSnapshot?.projectId === 'string' ? queued.contextSnapshot.projectId : null;
    if (!(await this.budgetGate.checkBeforeRun(agent.companyId, agentId, projectId)).allowed) {
      await this.lifecycle.finishRun(
        runId,
        { status: 'cancelled', errorCode: 'budget', error: 'budget hard stop: the scope is over its limit' },
        { agentId, promote: false },
      );
      return null;
    }
    if ((await this.runs.countRunning(agent.companyId, agentId)) >= heartbeatPolicy(agent.runtimeConfig).maxConcurrentRuns) return null;
    const run = await this.runs.claim(
      agent.companyId,
      runId,
      this.instanceId,
      this.config.heartbeat.leaseSec,
      this.lifecycle.logPathFor(agent.companyId, runId),
    );
    if (!run) return null;
    const agentChanged = await this.agents.markRunning(agent.companyId, agentId);
    this.live.status(run);
    this.live.event(run, 'lifecycle', 'run started', { claimedBy: this.instanceId, adapterType: run.adapterType });
    if (agentChanged) this.live.agentStatus(run.companyId, agentId, 'running', 'running');
    await recordRunActivity(this.recorder, 'heartbeat.run_started', run, { claimedBy: this.instanceId, adapterType: run.adapterType });
    this.db.afterCommit(() =>
      this.events.emitStarted({
        runId: run.id,
        companyId: run.companyId,
        agentId: run.agentId,
        adapterType: run.adapterType,
        createdAt: run.createdAt,
        startedAt: run.startedAt ?? new Date(),
      }),
    );
    return { run, agent };
  }

  /** Renews the leases of the runs executing here; stops those that ended elsewhere. */
  async renewLeases(): Promise<void> {
    const ids = this.localRunIds();
    if (ids.length === 0 || this.stopping) return;
    try {
      const bytes = ids.map((id) => this.local.get(id)?.logBytes() ?? 0);
      await this.runs.renewLeases(ids, bytes, this.config.heartbeat.leaseSec, this.instanceId);
      const rows = await this.runs.ownership(ids);
      const byId = new Map(rows.map((r) => [r.id, r]));
      for (const id of ids) {
        const r = byId.get(id);
        // gone (agent or company deleted), ended, or taken over by the reaper: stop the process here
        if (!r) this.local.get(id)?.cancel('run deleted');
        else if (r.status !== 'running' || r.claimedBy !== this.instanceId) this.local.get(id)?.cancel(`run ended elsewhere (${r.status})`);
      }
    } catch (err) {
      if (!this.stopping) this.logger.error(`lease renewal failed: ${(err as Error).message}`);
    }
  }

  /**
   * Runs this instance (or a dead process of this host) left running: with no process behind
   * them they fail at once instead of waiting for their lease. Process groups such runs left
   * behind (a crash of the instance) are killed first.
   */
  async reapOwnOrphans(): Promise<number> {
    await this.processGroups.killStale(this.instanceId, this.localRunIds());
    const rows = await this.runs.runningClaimed();
    let n = 0;
    for (const r of rows) {
      const mine = r.claimedBy === this.instanceId && !this.local.has(r.id);
      if (!mine && !isDeadLocalOwner(r.claimedBy)) continue;
      const ended = await this.lifecycle.finishRun(r.id, {
        status: 'failed',
        errorCode: 'orphaned_run',
        error: `no process behind the run: instance ${r.claimedBy} restarted or lost it`,
      });
      if (ended) n++;
    }
    return n;
  }
}
