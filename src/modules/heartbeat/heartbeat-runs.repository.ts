import { Injectable } from '@nestjs/common';
import type { KeysetCursor } from '../../common/http/keyset-cursor';
import { CompanyScopedRepository } from '../../database/company-scoped.repository';
import { Db } from '../../database/db.service';
import type { RunRow } from './heartbeat.types';

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

/**
 * Reads of heartbeat runs for the board's run views (history with keyset paging, live runs). The
 * engine's own writes are still in its services (see eslint.legacy.mjs); new statements go here.
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
}
