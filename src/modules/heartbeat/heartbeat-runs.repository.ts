import { Injectable } from '@nestjs/common';
import type { KeysetCursor } from '../../common/http/keyset-cursor';
import { isUuid } from '../../common/http/uuid';
import { CompanyScopedRepository } from '../../database/company-scoped.repository';
import { Db } from '../../database/db.service';
import { recordColumns } from '../../database/row-mapping';
import type { RunOutcome, WakeContext } from '../adapters/run.types';
import type { EngineAgentRecord, RunRecord } from './heartbeat.types';
import type { ScopeFilter, WakeRecord } from './wakeup-requests.repository';
import { startRunTrace } from '../../common/tracing/run-tracing';

/** The heartbeat_runs columns of a RunRecord. */
const RUN_COLUMNS = `id, company_id, agent_id, wakeup_request_id, status, invocation_source, trigger_detail, adapter_type, issue_id,
  context_snapshot, started_at, finished_at, exit_code, error_code, error, usage_json, result_json, log_path, log_bytes, last_output_at,
  claimed_by, lease_expires_at, trace_parent, created_at, updated_at`;

const RUN_RECORD = recordColumns(RUN_COLUMNS);
const RUN_RECORD_R = recordColumns(RUN_COLUMNS, 'r');

/** RUN_COLUMNS selected as RunRecord fields (prefixed with `r.` for the alias `r`), for SELECT and RETURNING. */
export function runRecordColumns(alias?: 'r'): string {
  return alias ? RUN_RECORD_R : RUN_RECORD;
}

export interface RunListFilter {
  agentId?: string;
  status?: string;
  issueId?: string;
  after?: KeysetCursor;
  limit: number;
}

/** A live run with its agent, for the board's live views. */
export interface LiveRunRecord {
  id: string;
  companyId: string;
  agentId: string;
  agentName: string;
  adapterType: string;
  status: string;
  invocationSource: string;
  triggerDetail: string | null;
  issueId: string | null;
  commentId: string | null;
  wakeReason: string | null;
  logBytes: string | number;
  lastOutputAt: Date | null;
  startedAt: Date | null;
  finishedAt: Date | null;
  createdAt: Date;
}

/** An agent's latest run, for the instance heartbeat page. */
export interface LatestRunRecord {
  agentId: string;
  id: string;
  status: string;
  invocationSource: string;
  createdAt: Date;
  finishedAt: Date | null;
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
 * the engine's statements (create, end, join, coalesce), each in the run's company and under the
 * agent lock the caller holds. The dispatcher's claims and the reaper's sweeps across companies are
 * in RunClaimsRepository.
 */
@Injectable()
export class HeartbeatRunsRepository extends CompanyScopedRepository {
  constructor(db: Db) {
    super(db);
  }

  /** Newest first; one row more than `limit` tells the caller there is a next page. */
  list(companyId: string, f: RunListFilter): Promise<Array<RunRecord & { cursorTs: string }>> {
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
      `SELECT ${runRecordColumns('r')}, r.created_at::text AS "cursorTs" FROM heartbeat_runs r
        WHERE ${where.join(' AND ')}
        ORDER BY r.created_at DESC, r.id DESC LIMIT ${f.limit + 1}`,
      params,
    );
  }

  /** Queued and running runs (`finished: false`), or the most recent ended ones (`finished: true`). */
  live(
    companyId: string,
    opts: { issueId?: string; checkoutRunId?: string | null; limit: number; finished?: boolean },
  ): Promise<LiveRunRecord[]> {
    const params: unknown[] = [opts.limit];
    let issueFilter = '';
    if (opts.issueId) {
      params.push(opts.issueId, opts.checkoutRunId ?? null);
      issueFilter = `AND (r.issue_id = $3 OR r.id = $4::uuid)`;
    }
    const status = opts.finished ? `r.status NOT IN ('queued', 'running')` : `r.status IN ('queued', 'running')`;
    return this.rows(
      companyId,
      `SELECT r.id, r.company_id AS "companyId", r.agent_id AS "agentId", a.name AS "agentName", r.adapter_type AS "adapterType", r.status,
              r.invocation_source AS "invocationSource", r.trigger_detail AS "triggerDetail", r.issue_id AS "issueId",
              r.context_snapshot->>'commentId' AS "commentId", r.context_snapshot->>'reason' AS "wakeReason",
              r.log_bytes AS "logBytes", r.last_output_at AS "lastOutputAt", r.started_at AS "startedAt", r.finished_at AS "finishedAt",
              r.created_at AS "createdAt"
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

  // --- the engine (in the run's company, under the agent lock) ---

  findById(companyId: string, runId: string): Promise<RunRecord | null> {
    return this.row<RunRecord>(companyId, `SELECT ${runRecordColumns()} FROM heartbeat_runs WHERE company_id = $1 AND id = $2`, [runId]);
  }

  /** The company and agent of a run named by id (ending a run: the reaper, cancellation and the executor hold its id). */
  refOf(runId: string): Promise<{ companyId: string; agentId: string } | null> {
    return this.unscopedRow<{ companyId: string; agentId: string }>(
      'resolves the company and agent of a run named by id, before its agent lock is taken',
      'SELECT company_id AS "companyId", agent_id AS "agentId" FROM heartbeat_runs WHERE id = $1',
      [runId],
    );
  }

  /** A queued run for a wake. */
  async insertQueued(agent: EngineAgentRecord, wake: WakeRecord, context: WakeContext): Promise<RunRecord> {
    const [run] = await this.rows<RunRecord>(
      agent.companyId,
      `INSERT INTO heartbeat_runs (company_id, agent_id, wakeup_request_id, invocation_source, trigger_detail, adapter_type, issue_id, context_snapshot,
                                   trace_parent)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING ${runRecordColumns()}`,
      [
        agent.id,
        wake.id,
        wake.source,
        wake.triggerDetail,
        agent.adapterType,
        wake.issueId,
        context,
        startRunTrace(
          { companyId: agent.companyId, agentId: agent.id, issueId: wake.issueId, adapterType: agent.adapterType },
          wake.traceParent,
          wake.source,
        ),
      ],
    );
    return run;
  }

  /** Ends a live run with its outcome; null when it had already ended (or, for the reaper, its lease was renewed). */
  async finish(companyId: string, runId: string, outcome: RunOutcome, p: FinishRunParams): Promise<RunRecord | null> {
    const [run] = await this.returning<RunRecord>(
      companyId,
      `UPDATE heartbeat_runs
            SET status = $3, finished_at = now(), exit_code = $4, error_code = $5, error = $6,
                usage_json = COALESCE($7, usage_json), result_json = COALESCE($8, result_json),
                log_bytes = GREATEST(log_bytes, $9), lease_expires_at = NULL, updated_at = now(),
                last_output_at = CASE WHEN $9 > log_bytes THEN now() ELSE last_output_at END
          WHERE company_id = $1 AND id = $2 AND agent_id = $10 AND status IN ('queued','running')
                ${p.onlyIfLeaseExpired ? 'AND lease_expires_at < now()' : ''}
          RETURNING ${runRecordColumns()}`,
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
  async setLiveUsage(companyId: string, runId: string, usage: Record<string, unknown>): Promise<void> {
    await this.returning(companyId, `UPDATE heartbeat_runs SET usage_json = $3 WHERE company_id = $1 AND id = $2 AND status = 'running'`, [
      runId,
      usage,
    ]);
  }

  /**
   * The usage the process of an ended run reported to its end (it had been ended elsewhere: the
   * usage stored then was the live one). Null when the run is unknown or still live.
   */
  async settleUsage(companyId: string, runId: string, usage: Record<string, unknown>): Promise<RunRecord | null> {
    const [row] = await this.returning<RunRecord>(
      companyId,
      `UPDATE heartbeat_runs SET usage_json = $3, updated_at = now()
        WHERE company_id = $1 AND id = $2 AND status NOT IN ('queued','running') RETURNING ${runRecordColumns()}`,
      [runId, usage],
    );
    return row ?? null;
  }

  /**
   * The run's project (the wake's, else its issue's) and that project's workspace directory (the
   * primary one first), for cost attribution and the CLI runtimes' working directory.
   */
  // reads issues, projects and project_workspaces (owned by issues and projects; see FOREIGN_READS)
  async projectContext(run: RunRecord): Promise<{ projectId: string | null; cwd: string | null }> {
    const p = run.contextSnapshot.projectId;
    const wakeProject = typeof p === 'string' && isUuid(p) ? p : null;
    const row = await this.row<{ project_id: string; cwd: string | null }>(
      run.companyId,
      `SELECT p.id AS project_id,
              (SELECT w.cwd FROM project_workspaces w WHERE w.project_id = p.id AND w.company_id = p.company_id AND w.cwd IS NOT NULL
                ORDER BY w.is_primary DESC, w.created_at LIMIT 1) AS cwd
         FROM projects p
        WHERE p.company_id = $1
          AND p.id = COALESCE($2::uuid, (SELECT i.project_id FROM issues i WHERE i.id = $3 AND i.company_id = $1))`,
      [wakeProject, run.issueId],
    );
    return { projectId: row?.project_id ?? null, cwd: row?.cwd ?? null };
  }

  async raiseLogBytes(companyId: string, runId: string, logBytes: number): Promise<void> {
    await this.returning(companyId, 'UPDATE heartbeat_runs SET log_bytes = GREATEST(log_bytes, $3) WHERE company_id = $1 AND id = $2', [
      runId,
      logBytes,
    ]);
  }

  /** Whether the agent has a running run. */
  async anyRunning(companyId: string, agentId: string): Promise<boolean> {
    const rows = await this.rows(
      companyId,
      `SELECT 1 FROM heartbeat_runs WHERE company_id = $1 AND agent_id = $2 AND status = 'running' LIMIT 1`,
      [agentId],
    );
    return rows.length > 0;
  }

  /** Whether the agent has a live run on the issue. */
  async hasLiveOnIssue(companyId: string, agentId: string, issueId: string): Promise<boolean> {
    const live = await this.rows(
      companyId,
      `SELECT 1 FROM heartbeat_runs WHERE company_id = $1 AND agent_id = $2 AND issue_id = $3 AND status IN ('queued','running') LIMIT 1`,
      [agentId, issueId],
    );
    return live.length > 0;
  }

  /** The agent's oldest live run on the issue. */
  oldestLiveOnIssue(companyId: string, agentId: string, issueId: string): Promise<RunRecord | null> {
    return this.row<RunRecord>(
      companyId,
      `SELECT ${runRecordColumns()} FROM heartbeat_runs WHERE company_id = $1 AND agent_id = $2 AND issue_id = $3 AND status IN ('queued','running')
        ORDER BY created_at LIMIT 1`,
      [agentId, issueId],
    );
  }

  /** The agent's oldest live run. */
  oldestLiveOfAgent(companyId: string, agentId: string): Promise<RunRecord | null> {
    return this.row<RunRecord>(
      companyId,
      `SELECT ${runRecordColumns()} FROM heartbeat_runs WHERE company_id = $1 AND agent_id = $2 AND status IN ('queued','running') ORDER BY created_at LIMIT 1`,
      [agentId],
    );
  }

  /** The agent's oldest queued run without an issue. */
  oldestQueuedWithoutIssue(companyId: string, agentId: string): Promise<RunRecord | null> {
    return this.row<RunRecord>(
      companyId,
      `SELECT ${runRecordColumns()} FROM heartbeat_runs WHERE company_id = $1 AND agent_id = $2 AND issue_id IS NULL AND status = 'queued'
        ORDER BY created_at LIMIT 1`,
      [agentId],
    );
  }

  /** The live run on the issue of the deferred wake's agent (what a replayed deferred wake waits for). */
  async liveForDeferredWake(companyId: string, wakeId: string, issueId: string): Promise<RunRecord | undefined> {
    const live = await this.row<RunRecord>(
      companyId,
      `SELECT ${runRecordColumns('r')} FROM heartbeat_runs r JOIN agent_wakeup_requests w ON w.agent_id = r.agent_id AND w.company_id = r.company_id
          WHERE r.company_id = $1 AND w.id = $2 AND r.issue_id = $3 AND r.status IN ('queued','running') ORDER BY r.created_at LIMIT 1`,
      [wakeId, issueId],
    );
    return live ?? undefined;
  }

  /** Merges a wake into a queued run's context: the newest comment wins, every wake is listed. */
  async coalesceWake(
    companyId: string,
    runId: string,
    wakeId: string,
    entry: Record<string, unknown>,
    commentId: string | null,
  ): Promise<void> {
    await this.returning(
      companyId,
      `UPDATE heartbeat_runs
          SET context_snapshot = jsonb_set(
                jsonb_set(context_snapshot || CASE WHEN $5::text IS NULL THEN '{}'::jsonb ELSE jsonb_build_object('commentId', $5::text) END,
                          '{wakeupRequestIds}', COALESCE(context_snapshot->'wakeupRequestIds', '[]'::jsonb) || to_jsonb($3::text)),
                '{coalesced}', COALESCE(context_snapshot->'coalesced', '[]'::jsonb) || jsonb_build_array($4::jsonb)),
              updated_at = now()
        WHERE company_id = $1 AND id = $2 AND status = 'queued'`,
      [runId, wakeId, entry, commentId],
    );
  }

  /** Live runs of a cancelled scope (the wake filter, with the project read from the run's context). */
  liveIdsInScope(f: ScopeFilter): Promise<Array<{ id: string }>> {
    const runWhere = f.where.replace(`payload->>'projectId'`, `context_snapshot->'payload'->>'projectId'`);
    return this.rows<{ id: string }>(
      f.companyId,
      `SELECT id FROM heartbeat_runs WHERE ${runWhere} AND status IN ('queued','running') ORDER BY id`,
      f.params.slice(1),
    );
  }

  /**
   * The session the agent's last successful run of this adapter reported (same issue, or none), with
   * what shaped it (`sessionShape`: model, instructions hash, adapter type, folder) when it said.
   */
  async lastSession(
    run: RunRecord,
  ): Promise<{ id: string; shape: Record<string, unknown> | null; totals: Record<string, unknown> | null } | null> {
    const row = await this.row<{ sid: string | null; shape: unknown; totals: unknown }>(
      run.companyId,
      `SELECT result_json->>'sessionId' AS sid, result_json->'sessionShape' AS shape, result_json->'sessionTotals' AS totals FROM heartbeat_runs
        WHERE company_id = $1 AND agent_id = $2 AND id <> $3 AND status = 'succeeded' AND adapter_type = $4
          AND issue_id IS NOT DISTINCT FROM $5 AND result_json ? 'sessionId'
        ORDER BY finished_at DESC LIMIT 1`,
      [run.agentId, run.id, run.adapterType, run.issueId],
      { detached: true },
    );
    if (!row?.sid) return null;
    const record = (v: unknown) => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : null);
    return { id: row.sid, shape: record(row.shape), totals: record(row.totals) };
  }

  /** The latest run of each agent (the instance heartbeat page; the agents come from the agents module's answer). */
  latestOfAgents(agentIds: string[]): Promise<LatestRunRecord[]> {
    if (agentIds.length === 0) return Promise.resolve([]);
    return this.unscoped<LatestRunRecord>(
      'the instance heartbeat page: latest runs of agents the caller may see, listed already (possibly in several companies)',
      `SELECT lr.* FROM unnest($1::uuid[]) AS a(id)
         CROSS JOIN LATERAL (SELECT r.agent_id AS "agentId", r.id, r.status, r.invocation_source AS "invocationSource",
                                    r.created_at AS "createdAt", r.finished_at AS "finishedAt"
                               FROM heartbeat_runs r WHERE r.agent_id = a.id ORDER BY r.created_at DESC LIMIT 1) lr`,
      [agentIds],
    );
  }
}
