import { Injectable, OnModuleInit } from '@nestjs/common';
import type { Actor } from '../../common/auth/actor';
import { ActivityRecorder } from '../../common/activity/activity-recorder.service';
import { CancellationScope, WorkCancellation } from '../../common/events/work-cancellation';
import { Db } from '../../database/db.service';
import type { AgentRow, RunOutcome, RunRow, WakeContext } from './heartbeat.types';
import { RunLifecycleEvents } from './run-lifecycle-events';
import { RunLogService } from './run-log.service';
import { RunLiveEvents } from './run-live-events';
import { lockAgent, recordRunActivity, updateReturning } from './run-store';

interface WakeRow {
  id: string;
  source: string;
  trigger_detail: string | null;
  reason: string | null;
  payload: Record<string, unknown>;
  issue_id: string | null;
  force_fresh_session: boolean;
}

/** Answers the id of the hold pausing an issue's subtree, or null. */
export type IssueHoldProbe = (issueId: string) => Promise<string | null>;

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
export function contextForWake(w: WakeRow): WakeContext {
  return {
    source: w.source,
    triggerDetail: w.trigger_detail,
    reason: w.reason,
    payload: w.payload ?? {},
    issueId: w.issue_id,
    commentId: commentIdOf(w.payload ?? {}),
    forceFreshSession: w.force_fresh_session,
    wakeupRequestIds: [w.id],
  };
}

/**
 * Creating and ending runs, and what follows from an end: wake rows completed, the agent's status,
 * deferred wakes of the same agent and issue promoted to a new run, activity, lifecycle events.
 * Every method runs in the caller's transaction (or opens one) and takes the agent lock first.
 */
@Injectable()
export class RunLifecycle implements OnModuleInit {
  private readonly queuedListeners: Array<() => void> = [];
  private readonly endedHooks: Array<(run: RunRow) => Promise<void>> = [];
  private readonly holdProbes: IssueHoldProbe[] = [];

  constructor(
    private readonly db: Db,
    private readonly recorder: ActivityRecorder,
    private readonly events: RunLifecycleEvents,
    private readonly logs: RunLogService,
    private readonly cancellation: WorkCancellation,
    private readonly live: RunLiveEvents,
  ) {}

  onModuleInit(): void {
    this.cancellation.register((scope, reason) => this.cancelScope(scope, reason));
  }

  onRunQueued(listener: () => void): void {
    this.queuedListeners.push(listener);
  }

  /** Called in the transaction that ends a run (agent lock held), before deferred wakes are promoted (e.g. re-queueing a lost run). */
  onRunEnded(hook: (run: RunRow) => Promise<void>): void {
    this.endedHooks.push(hook);
  }

  /** The issues module answers whether an issue's subtree is paused (its wakes wait until the hold is released). */
  registerIssueHoldProbe(probe: IssueHoldProbe): void {
    this.holdProbes.push(probe);
  }

  /** The id of the hold pausing the issue (on it or an ancestor), or null. */
  async issueHold(issueId: string): Promise<string | null> {
    for (const probe of this.holdProbes) {
      const hold = await probe(issueId);
      if (hold) return hold;
    }
    return null;
  }

  /** A queued run for a wake (already inserted); the dispatcher hears of it after commit. Caller holds the agent lock. */
  async createRun(agent: AgentRow, wake: WakeRow, context: WakeContext): Promise<RunRow> {
    const [run] = await this.db.query<RunRow>(
      `INSERT INTO heartbeat_runs (company_id, agent_id, wakeup_request_id, invocation_source, trigger_detail, adapter_type, issue_id, context_snapshot)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING *`,
      [agent.company_id, agent.id, wake.id, wake.source, wake.trigger_detail, agent.adapter_type, wake.issue_id, context],
    );
    await this.db.query(`UPDATE agent_wakeup_requests SET status = 'claimed', run_id = $2, updated_at = now() WHERE id = $1`, [
      wake.id,
      run.id,
    ]);
    await recordRunActivity(this.recorder, 'heartbeat.run_queued', run, {
      source: wake.source,
      triggerDetail: wake.trigger_detail,
      reason: wake.reason,
      issueId: wake.issue_id,
    });
    this.db.afterCommit(() => this.queuedListeners.forEach((l) => l()));
    this.live.queued(run);
    await this.live.signalQueued();
    return run;
  }

  /** Ends a live run (no-op if it already ended). Returns the ended row, or null. */
  async finishRun(runId: string, outcome: RunOutcome, opts: FinishOptions = {}): Promise<RunRow | null> {
    return this.db.transaction(async () => {
      const agentId =
        opts.agentId ??
        (await this.db.query<{ agent_id: string }>('SELECT agent_id FROM heartbeat_runs WHERE id = $1', [runId]))[0]?.agent_id;
      if (!agentId) return null;
      await lockAgent(this.db, agentId);
      const [run] = await updateReturning<RunRow>(
        this.db,
        `UPDATE heartbeat_runs
            SET status = $2, finished_at = now(), exit_code = $3, error_code = $4, error = $5,
                usage_json = COALESCE($6, usage_json), result_json = COALESCE($7, result_json),
                log_bytes = GREATEST(log_bytes, $8), lease_expires_at = NULL, updated_at = now(),
                last_output_at = CASE WHEN $8 > log_bytes THEN now() ELSE last_output_at END
          WHERE id = $1 AND agent_id = $9 AND status IN ('queued','running') ${opts.onlyIfLeaseExpired ? 'AND lease_expires_at < now()' : ''}
          RETURNING *`,
        [
          runId,
          outcome.status,
          outcome.exitCode ?? null,
          outcome.errorCode ?? null,
          outcome.error?.slice(0, 4000) ?? null,
          outcome.usage ?? null,
          outcome.result ?? null,
          opts.logBytes ?? 0,
          agentId,
        ],
      );
      if (!run) {
        if (opts.logBytes)
          await this.db.query('UPDATE heartbeat_runs SET log_bytes = GREATEST(log_bytes, $2) WHERE id = $1', [runId, opts.logBytes]);
        return null;
      }
      await this.db.query(
        `UPDATE agent_wakeup_requests
            SET status = CASE WHEN $2::text IS NULL THEN 'completed' ELSE 'cancelled' END, skip_reason = COALESCE($2, skip_reason), updated_at = now()
          WHERE run_id = $1 AND status = 'claimed'`,
        [runId, opts.wakeCancelReason ?? null],
      );
      const failed = run.status === 'failed' || run.status === 'timed_out';
      const agentNow = await updateReturning<{ status: string }>(
        this.db,
        `UPDATE agents SET status = $2, updated_at = now()
          WHERE id = $1 AND status = 'running'
            AND NOT EXISTS (SELECT 1 FROM heartbeat_runs r WHERE r.agent_id = $1 AND r.status = 'running')
          RETURNING status`,
        [run.agent_id, failed ? 'error' : 'idle'],
      );
      this.live.status(run);
      this.live.event(run, 'lifecycle', `run ${run.status}`, { status: run.status, exitCode: run.exit_code, errorCode: run.error_code });
      if (agentNow.length > 0) this.live.agentStatus(run.company_id, run.agent_id, failed ? 'error' : 'idle', run.status);
      await recordRunActivity(
        this.recorder,
        `heartbeat.run_${run.status}`,
        run,
        {
          status: run.status,
          errorCode: run.error_code,
          error: run.error,
          exitCode: run.exit_code,
        },
        opts.actor,
      );
      for (const hook of this.endedHooks) await hook(run);
      if (opts.promote !== false) await this.promoteDeferred(run.agent_id, run.issue_id);
      this.db.afterCommit(() =>
        this.events.emitFinished({
          runId: run.id,
          companyId: run.company_id,
          agentId: run.agent_id,
          issueId: run.issue_id,
          status: run.status as RunOutcome['status'],
          errorCode: run.error_code,
          usage: run.usage_json,
          result: run.result_json,
          createdAt: run.created_at,
          startedAt: run.started_at,
          finishedAt: run.finished_at,
        }),
      );
      return run;
    });
  }

  /**
   * Deferred wakes of one agent and issue become one new run once no run of that agent is live on
   * that issue: the oldest wake owns the run, the others are coalesced into it. Caller holds the agent lock.
   */
  async promoteDeferred(agentId: string, issueId: string | null): Promise<RunRow | null> {
    if (!issueId) return null;
    const wakes = await this.db.query<WakeRow>(
      `SELECT id, source, trigger_detail, reason, payload, issue_id, force_fresh_session FROM agent_wakeup_requests
        WHERE agent_id = $1 AND issue_id = $2 AND status = 'deferred' ORDER BY created_at`,
      [agentId, issueId],
    );
    if (wakes.length === 0) return null;
    // a paused subtree keeps its wakes deferred until the hold is released (which promotes them)
    if (await this.issueHold(issueId)) return null;
    const live = await this.db.query(
      `SELECT 1 FROM heartbeat_runs WHERE agent_id = $1 AND issue_id = $2 AND status IN ('queued','running')`,
      [agentId, issueId],
    );
    if (live.length > 0) return null;
    const agent = await lockAgent(this.db, agentId);
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
      await this.db.query(`UPDATE agent_wakeup_requests SET status = 'coalesced', run_id = $2, updated_at = now() WHERE id = ANY($1)`, [
        rest.map((w) => w.id),
        run.id,
      ]);
    }
    return run;
  }

  /** The reaper's sweep: deferred wakes whose agent has no live run on their issue any more. */
  async promoteStrandedDeferred(): Promise<number> {
    // in random order: pairs that stay deferred (their issue's subtree is paused) must not crowd out the others
    const pairs = await this.db.query<{ agent_id: string; issue_id: string }>(
      `SELECT agent_id, issue_id FROM (
         SELECT DISTINCT w.agent_id, w.issue_id FROM agent_wakeup_requests w
          WHERE w.status = 'deferred' AND w.issue_id IS NOT NULL
            AND NOT EXISTS (SELECT 1 FROM heartbeat_runs r WHERE r.agent_id = w.agent_id AND r.issue_id = w.issue_id AND r.status IN ('queued','running'))
       ) p ORDER BY random() LIMIT 100`,
    );
    let n = 0;
    for (const p of pairs) {
      const run = await this.db.transaction(async () => {
        await lockAgent(this.db, p.agent_id);
        return this.promoteDeferred(p.agent_id, p.issue_id);
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
    const params: unknown[] = [scope.companyId];
    const filters: string[] = [];
    if (scope.agentIds) {
      params.push(scope.agentIds);
      filters.push(`agent_id = ANY($${params.length}::uuid[])`);
    }
    if (scope.issueId) {
      params.push(scope.issueId);
      filters.push(`issue_id = $${params.length}`);
    }
    if (scope.projectId) {
      params.push(scope.projectId);
      filters.push(`(issue_id IN (${await this.projectIssuesSql(params.length)}) OR payload->>'projectId' = $${params.length})`);
    }
    const where = ['company_id = $1', ...filters].join(' AND ');
    await this.db.query(
      `UPDATE agent_wakeup_requests SET status = 'cancelled', skip_reason = $${params.length + 1}, updated_at = now()
        WHERE ${where} AND status IN ('queued','deferred')`,
      [...params, reason],
    );
    const runWhere = where.replace(`payload->>'projectId'`, `context_snapshot->'payload'->>'projectId'`);
    const runs = await this.db.query<{ id: string }>(
      `SELECT id FROM heartbeat_runs WHERE ${runWhere} AND status IN ('queued','running') ORDER BY id`,
      params,
    );
    for (const r of runs) {
      await this.finishRun(
        r.id,
        { status: 'cancelled', errorCode: 'scope_cancelled', error: `cancelled: ${reason}` },
        { promote: false, wakeCancelReason: reason },
      );
    }
  }

  /** Issues of a project, when the issues table exists (it belongs to another module). */
  private async projectIssuesSql(paramIndex: number): Promise<string> {
    const [t] = await this.db.query<{ exists: boolean }>(`SELECT to_regclass('public.issues') IS NOT NULL AS exists`);
    return t?.exists
      ? `SELECT i.id FROM issues i WHERE i.company_id = $1 AND to_jsonb(i)->>'project_id' = $${paramIndex}`
      : 'SELECT NULL::uuid WHERE false';
  }

  logPathFor(companyId: string, runId: string): string {
    return this.logs.relativePath(companyId, runId);
  }
}
