import { Injectable } from '@nestjs/common';
import type { KeysetCursor } from '../../common/http/keyset-cursor';
import { isUuid } from '../../common/http/uuid';
import { CompanyScopedRepository, returningRows } from '../../database/company-scoped.repository';
import { Db } from '../../database/db.service';
import type { RunOutcome, WakeContext } from '../adapters/run.types';
import type { AgentRow, RunRow } from './heartbeat.types';
import type { ScopeFilter, WakeRow } from './wakeup-requests.repository';
import { startRunTrace } from '../../common/tracing/run-tracing';

export interface RunListFilter {
  agentId?: string;
  status?: string;
  issueId?: string;
  after?: KeysetCursor;
  limit: number;
}

/** A live run with its agent, for the board's live views. */
export interface LiveRunRow {
  id: string;
  company_id: string;
  agent_id: string;
  agent_name: string;
  adapter_type: string;
  status: string;
  invocation_source: string;
  trigger_detail: string | null;
  issue_id: string | null;
  comment_id: string | null;
  wake_reason: string | null;
  log_bytes: string | number;
  last_output_at: Date | null;
  started_at: Date | null;
  finished_at: Date | null;
  created_at: Date;
}

/** How a run is ended (see RunLifecycle.finishRun). */
export interface FinishRunParams {
  agentId: string;
  logBytes: number;
  /** the reaper: only end the run if its lease is (still) expired */
  onlyIfLeaseExpired?: boolean;
}

/**
 * heartbeat_runs: reads for the board's run views (history with keyset paging, live runs), and
 * the engine's statements (create, claim, lease, end). The engine's are engine-wide, keyed by run
 * or agent id (the company is the run's own), and run under the agent lock the caller holds; the
 * dispatcher's and reaper's sweeps go to the pool directly (`dataSource.query`), outside any
 * transaction, as they always did.
 */
@Injectable()
export class HeartbeatRunsRepository extends CompanyScopedRepository {
  constructor(db: Db) {
    super(db);
  }

  /** Newest first; one row more than `limit` tells the caller there is a next page. */
  list(companyId: string, f: RunListFilter): Promise<Array<RunRow & { cursor_ts: string }>> {
    const params: unknown[] = [];
    const where = ['r.company_id = $1'];
    const add = (sql: (n: number) => string, ...values: unknown[]) => {
      const first = params.length + 2;
      params.push(...values);
      where.push(sql(first));
    };
    if (f.agentId) add((n) => `r.agent_id = $${n}`, f.agentId);
    if (f.status) add((n) => `r.status = $${n}`, f.status);
    if (f.issueId) add((n) => `r.issue_id = $${n}`, f.issueId);
    if (f.after) add((n) => `(r.created_at, r.id) < ($${n}::timestamptz, $${n + 1}::uuid)`, f.after.createdAt, f.after.id);
    return this.rows(
      companyId,
      `SELECT r.*, r.created_at::text AS cursor_ts FROM heartbeat_runs r
        WHERE ${where.join(' AND ')}
        ORDER BY r.created_at DESC, r.id DESC LIMIT ${f.limit + 1}`,
      params,
    );
  }

  /** Queued and running runs of the company (or of one issue: runs for it and its checkout run), newest first. */
  /** Queued and running runs (`finished: false`), or the most recent ended ones (`finished: true`). */
  live(
    companyId: string,
    opts: { issueId?: string; checkoutRunId?: string | null; limit: number; finished?: boolean },
  ): Promise<LiveRunRow[]> {
    const params: unknown[] = [opts.limit];
    let issueFilter = '';
    if (opts.issueId) {
      params.push(opts.issueId, opts.checkoutRunId ?? null);
      issueFilter = `AND (r.issue_id = $3 OR r.id = $4::uuid)`;
    }
    const status = opts.finished ? `r.status NOT IN ('queued', 'running')` : `r.status IN ('queued', 'running')`;
    return this.rows(
      companyId,
      `SELECT r.id, r.company_id, r.agent_id, a.name AS agent_name, r.adapter_type, r.status, r.invocation_source, r.trigger_detail,
              r.issue_id, r.context_snapshot->>'commentId' AS comment_id, r.context_snapshot->>'reason' AS wake_reason,
              r.log_bytes, r.last_output_at, r.started_at, r.finished_at, r.created_at
         FROM heartbeat_runs r JOIN agents a ON a.id = r.agent_id
        WHERE r.company_id = $1 AND ${status} ${issueFilter}
        ORDER BY r.created_at DESC, r.id DESC LIMIT $2`,
      params,
    );
  }

  /**
   * Comments of an issue whose wakes have not reached a run yet: queued or deferred behind a live
   * run, or coalesced into a run that is still queued.
   */
  async pendingWakeCommentIds(companyId: string, issueId: string): Promise<string[]> {
    const rows = await this.rows<{ comment_id: string }>(
      companyId,
      `SELECT DISTINCT w.payload->>'commentId' AS comment_id
         FROM agent_wakeup_requests w
        WHERE w.company_id = $1 AND w.issue_id = $2 AND w.payload ? 'commentId'
          AND (w.status IN ('queued', 'deferred')
               OR (w.status = 'claimed' AND EXISTS (SELECT 1 FROM heartbeat_runs r WHERE r.id = w.run_id AND r.status = 'queued')))`,
      [issueId],
    );
    return rows.map((r) => r.comment_id);
  }

  // --- the engine (engine-wide, by run or agent id) ---

  async findById(runId: string): Promise<RunRow | null> {
    const [row] = await this.db.query<RunRow>('SELECT * FROM heartbeat_runs WHERE id = $1', [runId]);
    return row ?? null;
  }

  async agentIdOf(runId: string): Promise<string | undefined> {
    return (await this.db.query<{ agent_id: string }>('SELECT agent_id FROM heartbeat_runs WHERE id = $1', [runId]))[0]?.agent_id;
  }

  /** A queued run for a wake. */
  async insertQueued(agent: AgentRow, wake: WakeRow, context: WakeContext): Promise<RunRow> {
    const [run] = await this.db.query<RunRow>(
      `INSERT INTO heartbeat_runs (company_id, agent_id, wakeup_request_id, invocation_source, trigger_detail, adapter_type, issue_id, context_snapshot,
                                   trace_parent)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING *`,
      [
        agent.company_id,
        agent.id,
        wake.id,
        wake.source,
        wake.trigger_detail,
        agent.adapter_type,
        wake.issue_id,
        context,
        startRunTrace(
          { company_id: agent.company_id, agent_id: agent.id, issue_id: wake.issue_id, adapter_type: agent.adapter_type },
          wake.trace_parent,
          wake.source,
        ),
      ],
    );
    return run;
  }

  /** Ends a live run with its outcome; null when it had already ended (or, for the reaper, its lease was renewed). */
  async finish(runId: string, outcome: RunOutcome, p: FinishRunParams): Promise<RunRow | null> {
    const [run] = await returningRows<RunRow>(
      this.db,
      `UPDATE heartbeat_runs
            SET status = $2, finished_at = now(), exit_code = $3, error_code = $4, error = $5,
                usage_json = COALESCE($6, usage_json), result_json = COALESCE($7, result_json),
                log_bytes = GREATEST(log_bytes, $8), lease_expires_at = NULL, updated_at = now(),
                last_output_at = CASE WHEN $8 > log_bytes THEN now() ELSE last_output_at END
          WHERE id = $1 AND agent_id = $9 AND status IN ('queued','running') ${p.onlyIfLeaseExpired ? 'AND lease_expires_at < now()' : ''}
          RETURNING *`,
      [
        runId,
        outcome.status,
        outcome.exitCode ?? null,
        outcome.errorCode ?? null,
        outcome.error?.slice(0, 4000) ?? null,
        outcome.usage ?? null,
        outcome.result ?? null,
        p.logBytes,
        p.agentId,
      ],
    );
    return run ?? null;
  }

  /** Usage so far of a running run (the CLI runtimes meter it as the stream arrives); the ending outcome replaces it. */
  async setLiveUsage(runId: string, usage: Record<string, unknown>): Promise<void> {
    await this.db.query(`UPDATE heartbeat_runs SET usage_json = $2 WHERE id = $1 AND status = 'running'`, [runId, usage]);
  }

  /**
   * The run's project (the wake's, else its issue's) and that project's workspace directory (the
   * primary one first), for cost attribution and the CLI runtimes' working directory.
   */
  // reads issues, projects and project_workspaces (owned by issues and projects)
  async projectContext(run: RunRow): Promise<{ projectId: string | null; cwd: string | null }> {
    const p = run.context_snapshot.projectId;
    const wakeProject = typeof p === 'string' && isUuid(p) ? p : null;
    const [row] = (await this.db.query(
      `SELECT p.id AS project_id,
              (SELECT w.cwd FROM project_workspaces w WHERE w.project_id = p.id AND w.company_id = p.company_id AND w.cwd IS NOT NULL
                ORDER BY w.is_primary DESC, w.created_at LIMIT 1) AS cwd
         FROM projects p
        WHERE p.company_id = $1
          AND p.id = COALESCE($2::uuid, (SELECT i.project_id FROM issues i WHERE i.id = $3 AND i.company_id = $1))`,
      [run.company_id, wakeProject, run.issue_id],
    )) as Array<{ project_id: string; cwd: string | null }>;
    return { projectId: row?.project_id ?? null, cwd: row?.cwd ?? null };
  }

  async raiseLogBytes(runId: string, logBytes: number): Promise<void> {
    await this.db.query('UPDATE heartbeat_runs SET log_bytes = GREATEST(log_bytes, $2) WHERE id = $1', [runId, logBytes]);
  }

  /** The agent's live runs on the issue (rows of `1`). */
  async hasLiveOnIssue(agentId: string, issueId: string): Promise<boolean> {
    const live = await this.db.query(
      `SELECT 1 FROM heartbeat_runs WHERE agent_id = $1 AND issue_id = $2 AND status IN ('queued','running') LIMIT 1`,
      [agentId, issueId],
    );
    return live.length > 0;
  }

  /** The agent's oldest live run on the issue. */
  async oldestLiveOnIssue(agentId: string, issueId: string): Promise<RunRow | null> {
    const [row] = await this.db.query<RunRow>(
      `SELECT * FROM heartbeat_runs WHERE agent_id = $1 AND issue_id = $2 AND status IN ('queued','running') ORDER BY created_at LIMIT 1`,
      [agentId, issueId],
    );
    return row ?? null;
  }

  /** The agent's oldest live run. */
  async oldestLiveOfAgent(agentId: string): Promise<RunRow | null> {
    const [row] = await this.db.query<RunRow>(
      `SELECT * FROM heartbeat_runs WHERE agent_id = $1 AND status IN ('queued','running') ORDER BY created_at LIMIT 1`,
      [agentId],
    );
    return row ?? null;
  }

  /** The agent's oldest queued run without an issue. */
  async oldestQueuedWithoutIssue(agentId: string): Promise<RunRow | null> {
    const [row] = await this.db.query<RunRow>(
      `SELECT * FROM heartbeat_runs WHERE agent_id = $1 AND issue_id IS NULL AND status = 'queued' ORDER BY created_at LIMIT 1`,
      [agentId],
    );
    return row ?? null;
  }

  /** The live run on the issue of the deferred wake's agent (what a replayed deferred wake waits for). */
  async liveForDeferredWake(wakeId: string, issueId: string): Promise<RunRow | undefined> {
    const [live] = await this.db.query<RunRow>(
      `SELECT r.* FROM heartbeat_runs r JOIN agent_wakeup_requests w ON w.agent_id = r.agent_id
          WHERE w.id = $1 AND r.issue_id = $2 AND r.status IN ('queued','running') ORDER BY r.created_at LIMIT 1`,
      [wakeId, issueId],
    );
    return live;
  }

  /** Merges a wake into a queued run's context: the newest comment wins, every wake is listed. */
  async coalesceWake(runId: string, wakeId: string, entry: Record<string, unknown>, commentId: string | null): Promise<void> {
    await this.db.query(
      `UPDATE heartbeat_runs
          SET context_snapshot = jsonb_set(
                jsonb_set(context_snapshot || CASE WHEN $4::text IS NULL THEN '{}'::jsonb ELSE jsonb_build_object('commentId', $4::text) END,
                          '{wakeupRequestIds}', COALESCE(context_snapshot->'wakeupRequestIds', '[]'::jsonb) || to_jsonb($2::text)),
                '{coalesced}', COALESCE(context_snapshot->'coalesced', '[]'::jsonb) || jsonb_build_array($3::jsonb)),
              updated_at = now()
        WHERE id = $1 AND status = 'queued'`,
      [runId, wakeId, entry, commentId],
    );
  }

  /** Live runs of a cancelled scope (the wake filter, with the project read from the run's context). */
  liveIdsInScope(f: ScopeFilter): Promise<Array<{ id: string }>> {
    const runWhere = f.where.replace(`payload->>'projectId'`, `context_snapshot->'payload'->>'projectId'`);
    return this.db.query<{ id: string }>(
      `SELECT id FROM heartbeat_runs WHERE ${runWhere} AND status IN ('queued','running') ORDER BY id`,
      f.params,
    );
  }

  /** The oldest queued run of each agent under its concurrency limit, oldest first. */
  async claimCandidates(limit: number): Promise<Array<{ id: string; agent_id: string; created_at: Date }>> {
    return (await this.db.dataSource.query(
      `SELECT * FROM (SELECT DISTINCT ON (r.agent_id) r.id, r.agent_id, r.created_at FROM heartbeat_runs r JOIN agents a ON a.id = r.agent_id
        WHERE r.status = 'queued'
          AND (SELECT count(*) FROM heartbeat_runs x WHERE x.agent_id = r.agent_id AND x.status = 'running')
              < CASE WHEN a.runtime_config->'heartbeat'->>'maxConcurrentRuns' ~ '^[1-9][0-9]{0,3}$'
                     THEN (a.runtime_config->'heartbeat'->>'maxConcurrentRuns')::int ELSE 1 END
        ORDER BY r.agent_id, r.created_at) c ORDER BY c.created_at LIMIT $1`,
      [limit],
    )) as Array<{ id: string; agent_id: string; created_at: Date }>;
  }

  /** The run if still queued, with what the budget check needs. */
  async queuedForClaim(runId: string): Promise<{ company_id: string; context_snapshot: { projectId?: unknown } } | undefined> {
    const [queued] = await this.db.query<{ company_id: string; context_snapshot: { projectId?: unknown } }>(
      `SELECT company_id, context_snapshot FROM heartbeat_runs WHERE id = $1 AND status = 'queued'`,
      [runId],
    );
    return queued;
  }

  async countRunning(agentId: string): Promise<number> {
    const [{ n }] = await this.db.query<{ n: string }>(
      `SELECT count(*) AS n FROM heartbeat_runs WHERE agent_id = $1 AND status = 'running'`,
      [agentId],
    );
    return Number(n);
  }

  /** queued -> running for this instance, with a lease and the log path; null if another claimed it first. */
  async claim(runId: string, instanceId: string, leaseSec: number, logPath: string): Promise<RunRow | null> {
    const [run] = await returningRows<RunRow>(
      this.db,
      `UPDATE heartbeat_runs
          SET status = 'running', started_at = now(), claimed_by = $2, lease_expires_at = now() + make_interval(secs => $3),
              log_path = $4, updated_at = now()
        WHERE id = $1 AND status = 'queued' RETURNING *`,
      [runId, instanceId, leaseSec, logPath],
    );
    return run ?? null;
  }

  /** Renews this instance's leases on its running runs (rows another statement holds are skipped), with their log sizes. */
  async renewLeases(ids: string[], bytes: number[], leaseSec: number, instanceId: string): Promise<void> {
    await this.db.dataSource.query(
      `UPDATE heartbeat_runs r SET lease_expires_at = now() + make_interval(secs => $3), log_bytes = GREATEST(r.log_bytes, v.bytes),
               last_output_at = CASE WHEN v.bytes > r.log_bytes THEN now() ELSE r.last_output_at END
           FROM unnest($1::uuid[], $2::bigint[]) AS v(id, bytes)
          WHERE r.id = v.id AND r.id IN (
            SELECT id FROM heartbeat_runs WHERE id = ANY($1::uuid[]) AND status = 'running' AND claimed_by = $4 ORDER BY id FOR UPDATE SKIP LOCKED)`,
      [ids, bytes, leaseSec, instanceId],
    );
  }

  async ownership(ids: string[]): Promise<Array<{ id: string; status: string; claimed_by: string | null }>> {
    return (await this.db.dataSource.query(`SELECT id, status, claimed_by FROM heartbeat_runs WHERE id = ANY($1::uuid[])`, [
      ids,
    ])) as Array<{ id: string; status: string; claimed_by: string | null }>;
  }

  /** Running runs claimed by some instance, started more than 2 seconds ago. */
  async runningClaimed(): Promise<Array<{ id: string; claimed_by: string }>> {
    return (await this.db.dataSource.query(
      `SELECT id, claimed_by FROM heartbeat_runs WHERE status = 'running' AND claimed_by IS NOT NULL AND started_at < now() - interval '2 seconds'`,
    )) as Array<{ id: string; claimed_by: string }>;
  }

  /** Up to 100 running runs whose lease has expired, oldest lease first. */
  async leaseExpired(): Promise<Array<{ id: string }>> {
    return (await this.db.dataSource.query(
      `SELECT id FROM heartbeat_runs WHERE status = 'running' AND lease_expires_at < now() ORDER BY lease_expires_at LIMIT 100`,
    )) as Array<{ id: string }>;
  }

  /** The session id the agent's last successful run of this adapter reported (same issue, or none). */
  async lastSessionId(run: RunRow): Promise<string | null> {
    const [row] = (await this.db.dataSource.query(
      `SELECT result_json->>'sessionId' AS sid FROM heartbeat_runs
        WHERE agent_id = $1 AND id <> $2 AND status = 'succeeded' AND adapter_type = $3 AND issue_id IS NOT DISTINCT FROM $4
          AND result_json ? 'sessionId'
        ORDER BY finished_at DESC LIMIT 1`,
      [run.agent_id, run.id, run.adapter_type, run.issue_id],
    )) as Array<{ sid: string | null }>;
    return row?.sid ?? null;
  }

  /** Whether a run token's run is live (or ended within the grace) and its agent may act; no row when neither. */
  // reads agents (owned by agents)
  tokenRun(claims: { runId: string; agentId: string; companyId: string }, graceSec: number): Promise<Array<{ live: boolean }>> {
    return this.db.dataSource.query<Array<{ live: boolean }>>(
      `SELECT r.status IN ('queued','running') AS live FROM heartbeat_runs r JOIN agents a ON a.id = r.agent_id
        WHERE r.id = $1 AND r.agent_id = $2 AND r.company_id = $3
          AND (r.status IN ('queued','running') OR r.finished_at > now() - make_interval(secs => $4))
          AND a.status NOT IN ('terminated','pending_approval')`,
      [claims.runId, claims.agentId, claims.companyId, graceSec],
    );
  }
}
