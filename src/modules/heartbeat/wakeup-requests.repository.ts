import { Injectable } from '@nestjs/common';
import type { CancellationScope } from '../../common/events/work-cancellation.port';
import { CompanyScopedRepository } from '../../database/company-scoped.repository';
import { Db } from '../../database/db.service';
import { recordColumns } from '../../database/row-mapping';
import { currentTraceparent } from '../../common/tracing/run-tracing';

const IDEMPOTENCY_WINDOW = `interval '24 hours'`;

/** A wake as the queue decides on it. */
export interface StoredWake {
  id: string;
  status: string;
  skipReason: string | null;
  runId: string | null;
  issueId: string | null;
}

/** The columns a run is created from (its context snapshot and trigger). */
export interface WakeRecord {
  id: string;
  source: string;
  triggerDetail: string | null;
  reason: string | null;
  payload: Record<string, unknown>;
  issueId: string | null;
  forceFreshSession: boolean;
  /** W3C traceparent of what caused the wake (tracing on) */
  traceParent?: string | null;
}

/** The columns of a WakeRecord, selected as its fields. */
export const WAKE_RECORD_COLUMNS = recordColumns('id, source, trigger_detail, reason, payload, issue_id, force_fresh_session');

/** A wake as inserted. */
export type InsertedWake = StoredWake & WakeRecord;

export interface NewWake {
  companyId: string;
  agentId: string;
  source: string;
  triggerDetail: string | null;
  reason: string | null;
  payload: Record<string, unknown>;
  issueId: string | null;
  idempotencyKey: string | null;
  forceFreshSession: boolean;
  status: 'queued' | 'skipped';
  skipReason: string | null;
  requestedByActorType: string;
  requestedByActorId: string;
}

/** The filter of a cancelled scope (company, agents, issue, project) over agent_wakeup_requests; `$1` is the company id. */
export interface ScopeFilter {
  companyId: string;
  where: string;
  params: unknown[];
}

/** `issuesTableExists`: the project's issues are matched too (else only wakes whose payload names the project). */
export function scopeFilter(scope: CancellationScope, issuesTableExists: boolean): ScopeFilter {
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
    filters.push(`(issue_id IN (${projectIssuesSql(issuesTableExists, params.length)}) OR payload->>'projectId' = $${params.length})`);
  }
  return { companyId: scope.companyId, where: ['company_id = $1', ...filters].join(' AND '), params };
}

/** The project's issues as a subquery (issues are owned by the issues module), or none when that table is absent. */
function projectIssuesSql(issuesTableExists: boolean, paramIndex: number): string {
  // reads issues (owned by issues)
  return issuesTableExists
    ? `SELECT i.id FROM issues i WHERE i.company_id = $1 AND to_jsonb(i)->>'project_id' = $${paramIndex}`
    : 'SELECT NULL::uuid WHERE false';
}

/** A deferred (agent, issue) pair and its company. */
export interface DeferredPair {
  companyId: string;
  agentId: string;
  issueId: string;
}

/**
 * agent_wakeup_requests as the engine reads and writes it: the durable wake rows and their
 * transitions (queued, skipped, deferred, coalesced, claimed, completed, cancelled). Each statement
 * names the agent's company and runs under the agent lock the caller holds; the sweeps for
 * deferred wakes go across companies.
 */
@Injectable()
export class WakeupRequestsRepository extends CompanyScopedRepository {
  constructor(db: Db) {
    super(db);
  }

  /** The agent's wake with this idempotency key within the last 24 hours. */
  findByIdempotencyKey(companyId: string, agentId: string, key: string): Promise<StoredWake | null> {
    return this.row<StoredWake>(
      companyId,
      `SELECT ${recordColumns('id, status, skip_reason, run_id, issue_id')} FROM agent_wakeup_requests
            WHERE company_id = $1 AND agent_id = $2 AND idempotency_key = $3 AND created_at > now() - ${IDEMPOTENCY_WINDOW}
            ORDER BY created_at LIMIT 1`,
      [agentId, key],
    );
  }

  async insert(w: NewWake): Promise<InsertedWake> {
    const [wake] = await this.rows<InsertedWake>(
      w.companyId,
      `INSERT INTO agent_wakeup_requests
           (company_id, agent_id, source, trigger_detail, reason, payload, issue_id, idempotency_key, force_fresh_session,
            status, skip_reason, requested_by_actor_type, requested_by_actor_id, trace_parent)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)
         RETURNING ${recordColumns('id, status, skip_reason, run_id, issue_id, source, trigger_detail, reason, payload, force_fresh_session, trace_parent')}`,
      [
        w.agentId,
        w.source,
        w.triggerDetail,
        w.reason,
        w.payload,
        w.issueId,
        w.idempotencyKey,
        w.forceFreshSession,
        w.status,
        w.skipReason,
        w.requestedByActorType,
        w.requestedByActorId,
        currentTraceparent(),
      ],
    );
    return wake;
  }

  /** Wakes of the agent on the issue (not skipped) within the loop window. */
  async countRecentOnIssue(companyId: string, agentId: string, issueId: string, windowSec: number): Promise<number> {
    const c = await this.row<{ n: string }>(
      companyId,
      `SELECT count(*) AS n FROM agent_wakeup_requests
          WHERE company_id = $1 AND agent_id = $2 AND issue_id = $3 AND status <> 'skipped' AND created_at > now() - make_interval(secs => $4)`,
      [agentId, issueId, windowSec],
    );
    return Number(c?.n ?? 0);
  }

  async markDeferred(companyId: string, wakeId: string): Promise<void> {
    await this.returning(
      companyId,
      `UPDATE agent_wakeup_requests SET status = 'deferred', updated_at = now() WHERE company_id = $1 AND id = $2`,
      [wakeId],
    );
  }

  async markCoalesced(companyId: string, wakeId: string, runId: string): Promise<void> {
    await this.returning(
      companyId,
      `UPDATE agent_wakeup_requests SET status = 'coalesced', run_id = $3, updated_at = now() WHERE company_id = $1 AND id = $2`,
      [wakeId, runId],
    );
  }

  async markManyCoalesced(companyId: string, wakeIds: string[], runId: string): Promise<void> {
    await this.returning(
      companyId,
      `UPDATE agent_wakeup_requests SET status = 'coalesced', run_id = $3, updated_at = now() WHERE company_id = $1 AND id = ANY($2)`,
      [wakeIds, runId],
    );
  }

  async markClaimed(companyId: string, wakeId: string, runId: string): Promise<void> {
    await this.returning(
      companyId,
      `UPDATE agent_wakeup_requests SET status = 'claimed', run_id = $3, updated_at = now() WHERE company_id = $1 AND id = $2`,
      [wakeId, runId],
    );
  }

  /** The claimed wakes of an ended run: completed, or cancelled with the reason. */
  async settleForRun(companyId: string, runId: string, cancelReason: string | null): Promise<void> {
    await this.returning(
      companyId,
      `UPDATE agent_wakeup_requests
            SET status = CASE WHEN $3::text IS NULL THEN 'completed' ELSE 'cancelled' END, skip_reason = COALESCE($3, skip_reason), updated_at = now()
          WHERE company_id = $1 AND run_id = $2 AND status = 'claimed'`,
      [runId, cancelReason],
    );
  }

  /** Deferred wakes of one agent and issue, oldest first. */
  deferredOf(companyId: string, agentId: string, issueId: string): Promise<WakeRecord[]> {
    return this.rows<WakeRecord>(
      companyId,
      `SELECT ${WAKE_RECORD_COLUMNS} FROM agent_wakeup_requests
        WHERE company_id = $1 AND agent_id = $2 AND issue_id = $3 AND status = 'deferred' ORDER BY created_at`,
      [agentId, issueId],
    );
  }

  /** (agent, issue) pairs with deferred wakes on these issues. */
  deferredPairsOfIssues(issueIds: string[]): Promise<DeferredPair[]> {
    return this.unscoped<DeferredPair>(
      'issues named by id by the issues module (a released hold): their deferred wakes, with the company each names',
      `SELECT DISTINCT company_id AS "companyId", agent_id AS "agentId", issue_id AS "issueId" FROM agent_wakeup_requests
        WHERE status = 'deferred' AND issue_id = ANY($1::uuid[])`,
      [issueIds],
    );
  }

  /** Up to 100 (agent, issue) pairs with deferred wakes and no live run, in random order. */
  strandedDeferredPairs(): Promise<DeferredPair[]> {
    // in random order: pairs that stay deferred (their issue's subtree is paused) must not crowd out the others
    return this.unscoped<DeferredPair>(
      "the reaper's sweep for stranded deferred wakes, across companies",
      `SELECT company_id AS "companyId", agent_id AS "agentId", issue_id AS "issueId" FROM (
         SELECT DISTINCT w.company_id, w.agent_id, w.issue_id FROM agent_wakeup_requests w
          WHERE w.status = 'deferred' AND w.issue_id IS NOT NULL
            AND NOT EXISTS (SELECT 1 FROM heartbeat_runs r WHERE r.agent_id = w.agent_id AND r.issue_id = w.issue_id AND r.status IN ('queued','running'))
       ) p ORDER BY random() LIMIT 100`,
    );
  }

  /** Queued and deferred wakes of a cancelled scope become cancelled with the reason. */
  async cancelInScope(f: ScopeFilter, reason: string): Promise<void> {
    await this.returning(
      f.companyId,
      `UPDATE agent_wakeup_requests SET status = 'cancelled', skip_reason = $${f.params.length + 1}, updated_at = now()
        WHERE ${f.where} AND status IN ('queued','deferred')`,
      [...f.params.slice(1), reason],
    );
  }
}
