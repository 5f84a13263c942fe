import { Injectable } from '@nestjs/common';
import { CompanyScopedRepository } from '../../database/company-scoped.repository';
import { Db } from '../../database/db.service';
import { recordColumns } from '../../database/row-mapping';
import { IssueRecord, issueRecordColumns } from './issue.types';

/** A heartbeat run touching an issue, as the issue's run list reads it. */
export interface IssueRunRecord {
  id: string;
  status: string;
  agentId: string;
  adapterType: string;
  startedAt: Date | null;
  finishedAt: Date | null;
  createdAt: Date;
  invocationSource: string;
  usageJson: unknown;
  resultJson: unknown;
  /** bigint: text as the driver returns it */
  logBytes: string | number;
}

const ISSUE_RUN_COLUMNS = recordColumns(
  'id, status, agent_id, adapter_type, started_at, finished_at, created_at, invocation_source, usage_json, result_json, log_bytes',
  'r',
);

/** An open assignment of the agent's inbox: the issue, its open blockers and its live run. */
export type InboxLiteRecord = IssueRecord & {
  blockerIds: string[];
  runId: string | null;
  runStatus: string | null;
  runStartedAt: Date | null;
};

/** SQL: the run's context snapshot names issue `i` (directly, or in the wakeup payload it carries). */
const RUN_CONTEXT_NAMES_ISSUE = `i.id::text IN (r.context_snapshot->>'issueId', r.context_snapshot->'payload'->>'issueId')`;

/** SQL: run `r` touches issue `i` (issue column, context snapshot, checkout, or the issue's activity). */
const RUN_TOUCHES_ISSUE = `(r.issue_id = i.id OR ${RUN_CONTEXT_NAMES_ISSUE} OR r.id = i.checkout_run_id
  OR r.id IN (SELECT a.run_id FROM activity_log a WHERE a.company_id = i.company_id AND a.entity_type = 'issue'
               AND a.entity_id = i.id::text AND a.run_id IS NOT NULL))`;

/**
 * Issues and heartbeat runs together, for the issue pages and the agent's inbox: read-model joins
 * of heartbeat_runs and activity_log (owned by heartbeat and activity; listed in FOREIGN_READS).
 */
@Injectable()
export class IssueRunsRepository extends CompanyScopedRepository {
  constructor(db: Db) {
    super(db);
  }

  /** Heartbeat runs touching the issue, newest first (at most 200). */
  runsTouching(companyId: string, issueId: string): Promise<IssueRunRecord[]> {
    return this.rows<IssueRunRecord>(
      companyId,
      `SELECT ${ISSUE_RUN_COLUMNS} FROM heartbeat_runs r, issues i
        WHERE i.company_id = $1 AND i.id = $2 AND r.company_id = $1 AND ${RUN_TOUCHES_ISSUE}
        ORDER BY r.created_at DESC, r.id DESC LIMIT 200`,
      [issueId],
    );
  }

  /** The issues a run of the company touched, most recently updated first. */
  touchedByRun(companyId: string, runId: string): Promise<IssueRecord[]> {
    return this.rows<IssueRecord>(
      companyId,
      `SELECT ${issueRecordColumns('i')} FROM heartbeat_runs r JOIN issues i ON i.company_id = r.company_id
        WHERE r.company_id = $1 AND r.id = $2 AND (r.issue_id = i.id OR ${RUN_CONTEXT_NAMES_ISSUE} OR i.checkout_run_id = r.id
          OR i.id::text IN (SELECT a.entity_id FROM activity_log a WHERE a.run_id = r.id AND a.entity_type = 'issue'))
        ORDER BY i.updated_at DESC`,
      [runId],
    );
  }

  /** The agent's open assignments, priority first, with their live run and open blockers. */
  inboxLite(companyId: string, agentId: string): Promise<InboxLiteRecord[]> {
    return this.rows<InboxLiteRecord>(
      companyId,
      `SELECT ${issueRecordColumns('i')},
              coalesce((SELECT array_agg(b.id ORDER BY b.created_at, b.id) FROM issue_relations rel JOIN issues b ON b.id = rel.issue_id
                         WHERE rel.related_issue_id = i.id AND rel.type = 'blocks' AND b.status NOT IN ('done', 'cancelled')), '{}') AS "blockerIds",
              run.id AS "runId", run.status AS "runStatus", run.started_at AS "runStartedAt"
         FROM issues i
         LEFT JOIN LATERAL (
           SELECT r.id, r.status, r.started_at FROM heartbeat_runs r
            WHERE r.agent_id = i.assignee_agent_id AND r.status IN ('queued', 'running')
              AND (r.id = i.checkout_run_id OR r.issue_id = i.id OR ${RUN_CONTEXT_NAMES_ISSUE})
            ORDER BY r.created_at DESC LIMIT 1) run ON true
        WHERE i.company_id = $1 AND i.assignee_agent_id = $2 AND i.status IN ('todo', 'in_progress', 'blocked') AND i.hidden_at IS NULL
        ORDER BY i.priority_rank, i.updated_at DESC, i.id`,
      [agentId],
    );
  }
}
