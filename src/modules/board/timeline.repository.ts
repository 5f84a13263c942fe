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

export interface TimelineIssueRecord {
  id: string;
  identifier: string;
  title: string;
  firstAt: Date;
}

export interface TimelineRunRecord {
  id: string;
  agentId: string;
  issueId: string;
  status: string;
  invocationSource: string;
  adapterType: string;
  retryOf: string | null;
  usageJson: Record<string, unknown> | null;
  startAt: Date;
  finishedAt: Date | null;
}

export interface TimelineActivityRecord {
  actorType: 'user' | 'agent' | 'system';
  actorId: string;
  action: string;
  issueId: string;
  details: Record<string, unknown> | null;
  createdAt: Date;
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
  issues(companyId: string, f: TimelineFilter, limit: number, offset: number): Promise<Array<TimelineIssueRecord & { total: number }>> {
    return this.rows(
      companyId,
      `WITH hits AS (
         SELECT r.issue_id::text AS issue_id, coalesce(r.started_at, r.created_at) AS at FROM heartbeat_runs r
          WHERE r.company_id = $1 AND r.issue_id IS NOT NULL AND coalesce(r.started_at, r.created_at) <= $3 AND coalesce(r.finished_at, now()) >= $2
         UNION ALL
         SELECT a.entity_id, a.created_at FROM activity_log a
          WHERE a.company_id = $1 AND a.entity_type = 'issue' AND a.action = ANY($4::text[]) AND a.created_at >= $2 AND a.created_at <= $3)
       SELECT i.id, i.identifier, i.title, min(h.at) AS "firstAt", count(*) OVER ()::int AS total
         FROM hits h JOIN issues i ON i.id::text = h.issue_id AND i.company_id = $1
        WHERE i.hidden_at IS NULL
          AND ($5::uuid IS NULL OR i.project_id = $5) AND ($6::uuid IS NULL OR i.goal_id = $6) AND ($7::uuid IS NULL OR i.id = $7)
          AND ($8::text IS NULL OR i.created_by_user_id = $8 OR i.assignee_user_id = $8
               OR EXISTS (SELECT 1 FROM activity_log u WHERE u.company_id = $1 AND u.entity_type = 'issue' AND u.entity_id = i.id::text
                            AND u.actor_type = 'user' AND u.actor_id = $8))
        GROUP BY i.id, i.identifier, i.title
        ORDER BY "firstAt", i.id
        LIMIT $9 OFFSET $10`,
      [f.from, f.to, ACTIONS, f.projectId ?? null, f.goalId ?? null, f.issueId ?? null, f.userId ?? null, limit, offset],
    );
  }

  /** Runs on the issues that overlap the window. */
  runs(companyId: string, issueIds: string[], f: TimelineFilter): Promise<TimelineRunRecord[]> {
    return this.rows(
      companyId,
      `SELECT r.id, r.agent_id AS "agentId", r.issue_id AS "issueId", r.status, r.invocation_source AS "invocationSource",
              r.adapter_type AS "adapterType", r.usage_json AS "usageJson", r.finished_at AS "finishedAt",
              coalesce(r.started_at, r.created_at) AS "startAt", r.context_snapshot->>'retryOfRunId' AS "retryOf"
         FROM heartbeat_runs r
        WHERE r.company_id = $1 AND r.issue_id = ANY($2::uuid[]) AND coalesce(r.started_at, r.created_at) <= $4 AND coalesce(r.finished_at, now()) >= $3
        ORDER BY "startAt", r.id`,
      [issueIds, f.from, f.to],
    );
  }

  /** Creations, updates and comments of the issues in the window, oldest first. */
  activity(companyId: string, issueIds: string[], f: TimelineFilter): Promise<TimelineActivityRecord[]> {
    return this.rows(
      companyId,
      `SELECT a.actor_type AS "actorType", a.actor_id AS "actorId", a.action, a.entity_id AS "issueId", a.details, a.created_at AS "createdAt"
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
