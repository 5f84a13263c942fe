import { Injectable } from '@nestjs/common';
import { CompanyScopedRepository } from '../../database/company-scoped.repository';
import { Db } from '../../database/db.service';
import { issueColumns, IssueRow } from './issue.types';

export interface IssueRunRow {
  id: string;
  status: string;
  agent_id: string;
  adapter_type: string;
  started_at: Date | null;
  finished_at: Date | null;
  created_at: Date;
  invocation_source: string;
  usage_json: unknown;
  result_json: unknown;
  log_bytes: string | number;
}

export type InboxLiteRow = IssueRow & {
  blocker_ids: string[];
  run_id: string | null;
  run_status: string | null;
  run_started_at: Date | null;
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
  runsTouching(companyId: string, issueId: string): Promise<IssueRunRow[]> {
    return this.rows<IssueRunRow>(
      companyId,
      `SELECT r.* FROM heartbeat_runs r, issues i
        WHERE i.company_id = $1 AND i.id = $2 AND r.company_id = $1 AND ${RUN_TOUCHES_ISSUE}
        ORDER BY r.created_at DESC, r.id DESC LIMIT 200`,
      [issueId],
    );
  }

  /** The issues a run of the company touched, most recently updated first. */
  touchedByRun(companyId: string, runId: string): Promise<IssueRow[]> {
    return this.rows<IssueRow>(
      companyId,
      `SELECT ${issueColumns('i')} FROM heartbeat_runs r JOIN issues i ON i.company_id = r.company_id
        WHERE r.company_id = $1 AND r.id = $2 AND (r.issue_id = i.id OR ${RUN_CONTEXT_NAMES_ISSUE} OR i.checkout_run_id = r.id
          OR i.id::text IN (SELECT a.entity_id FROM activity_log a WHERE a.run_id = r.id AND a.entity_type = 'issue'))
        ORDER BY i.updated_at DESC`,
      [runId],
    );
  }

  /** The agent's open assignments, priority first, with their live run and open blockers. */
  inboxLite(companyId: string, agentId: string): Promise<InboxLiteRow[]> {
    return this.rows<InboxLiteRow>(
      companyId,
      `SELECT ${issueColumns('i')},
              coalesce((SELECT array_agg(b.id ORDER BY b.created_at, b.id) FROM issue_relations rel JOIN issues b ON b.id = rel.issue_id
                         WHERE rel.related_issue_id = i.id AND rel.type = 'blocks' AND b.status NOT IN ('done', 'cancelled')), '{}') AS blocker_ids,
              run.id AS run_id, run.status AS run_status, run.started_at AS run_started_at
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
