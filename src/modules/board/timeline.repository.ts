import { Injectable } from '@nestjs/common';
import { CompanyScopedRepository } from '../../database/company-scoped.repository';
import { Db } from '../../database/db.service';

export interface TimelineFilter {
  from: Date;
  to: Date;
  userId?: string;
  goalId?: string;
  projectId?: string;
  issueId?: string;
}

export interface TimelineIssueRow {
  id: string;
  identifier: string;
  title: string;
  first_at: Date;
}

export interface TimelineRunRow {
  id: string;
  agent_id: string;
  issue_id: string;
  status: string;
  invocation_source: string;
  adapter_type: string;
  retry_of: string | null;
  usage_json: Record<string, unknown> | null;
  start_at: Date;
  finished_at: Date | null;
}

export interface TimelineActivityRow {
  actor_type: 'user' | 'agent' | 'system';
  actor_id: string;
  action: string;
  issue_id: string;
  details: Record<string, unknown> | null;
  created_at: Date;
}

/** Issue actions the timeline shows (as events or hand-offs). */
const ACTIONS = ['issue.created', 'issue.updated', 'issue.comment_added'];

/**
 * The company timeline's read model: runs on issues (heartbeat_runs), what happened to issues
 * (activity_log), the issues themselves and the names of who acted (agents, users). One statement
 * per part; issues are paged, runs and activity are read for the page's issues only.
 */
@Injectable()
export class TimelineRepository extends CompanyScopedRepository {
  constructor(db: Db) {
    super(db);
  }

  /** The issues (not hidden, matching the filters) with a run or an issue action in the window, by first such moment. */
  issues(companyId: string, f: TimelineFilter, limit: number, offset: number): Promise<Array<TimelineIssueRow & { total: number }>> {
    return this.rows(
      companyId,
      `WITH hits AS (
         SELECT r.issue_id::text AS issue_id, coalesce(r.started_at, r.created_at) AS at FROM heartbeat_runs r
          WHERE r.company_id = $1 AND r.issue_id IS NOT NULL AND coalesce(r.started_at, r.created_at) <= $3 AND coalesce(r.finished_at, now()) >= $2
         UNION ALL
         SELECT a.entity_id, a.created_at FROM activity_log a
          WHERE a.company_id = $1 AND a.entity_type = 'issue' AND a.action = ANY($4::text[]) AND a.created_at >= $2 AND a.created_at <= $3)
       SELECT i.id, i.identifier, i.title, min(h.at) AS first_at, count(*) OVER ()::int AS total
         FROM hits h JOIN issues i ON i.id::text = h.issue_id AND i.company_id = $1
        WHERE i.hidden_at IS NULL
          AND ($5::uuid IS NULL OR i.project_id = $5) AND ($6::uuid IS NULL OR i.goal_id = $6) AND ($7::uuid IS NULL OR i.id = $7)
          AND ($8::text IS NULL OR i.created_by_user_id = $8 OR i.assignee_user_id = $8
               OR EXISTS (SELECT 1 FROM activity_log u WHERE u.company_id = $1 AND u.entity_type = 'issue' AND u.entity_id = i.id::text
                            AND u.actor_type = 'user' AND u.actor_id = $8))
        GROUP BY i.id, i.identifier, i.title
        ORDER BY first_at, i.id
        LIMIT $9 OFFSET $10`,
      [f.from, f.to, ACTIONS, f.projectId ?? null, f.goalId ?? null, f.issueId ?? null, f.userId ?? null, limit, offset],
    );
  }

  /** Runs on the issues that overlap the window. */
  runs(companyId: string, issueIds: string[], f: TimelineFilter): Promise<TimelineRunRow[]> {
    return this.rows(
      companyId,
      `SELECT r.id, r.agent_id, r.issue_id, r.status, r.invocation_source, r.adapter_type, r.usage_json, r.finished_at,
              coalesce(r.started_at, r.created_at) AS start_at, r.context_snapshot->>'retryOfRunId' AS retry_of
         FROM heartbeat_runs r
        WHERE r.company_id = $1 AND r.issue_id = ANY($2::uuid[]) AND coalesce(r.started_at, r.created_at) <= $4 AND coalesce(r.finished_at, now()) >= $3
        ORDER BY start_at, r.id`,
      [issueIds, f.from, f.to],
    );
  }

  /** Creations, updates and comments of the issues in the window, oldest first. */
  activity(companyId: string, issueIds: string[], f: TimelineFilter): Promise<TimelineActivityRow[]> {
    return this.rows(
      companyId,
      `SELECT a.actor_type, a.actor_id, a.action, a.entity_id AS issue_id, a.details, a.created_at
         FROM activity_log a
        WHERE a.company_id = $1 AND a.entity_type = 'issue' AND a.entity_id = ANY($2::text[]) AND a.action = ANY($5::text[])
          AND a.created_at >= $3 AND a.created_at <= $4
        ORDER BY a.created_at, a.id`,
      [issueIds, f.from, f.to, ACTIONS],
    );
  }

  /** Names of the company's agents among `ids`. */
  agentNames(companyId: string, ids: string[]): Promise<Array<{ id: string; name: string }>> {
    return this.rows(companyId, `SELECT id, name FROM agents WHERE company_id = $1 AND id = ANY($2::uuid[])`, [ids]);
  }

  /** Names of users among `ids` (users have no company: the ids come from the company's own records). */
  userNames(ids: string[]): Promise<Array<{ id: string; name: string }>> {
    return this.unscoped(
      'user names of actors named by the company activity just read',
      `SELECT id, name FROM users WHERE id = ANY($1::text[])`,
      [ids],
    );
  }
}
