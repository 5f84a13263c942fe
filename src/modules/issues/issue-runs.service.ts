import { Injectable } from '@nestjs/common';
import type { Actor, AgentActor } from '../../common/auth/actor';
import { CompanyAccessService } from '../../common/auth/company-access.service';
import { isUuid } from '../../common/http/uuid';
import { Db } from '../../database/db.service';
import { ActivityResponseDto } from '../activity/dto/activity.dto';
import { ActivityService } from '../activity/activity.service';
import { iso, IssueStore, toIssueSummary } from './issue-store.service';
import { issueColumns, IssueRow } from './issue.types';

interface RunRow {
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

/** SQL: the run's context snapshot names issue `i` (directly, or in the wakeup payload it carries). */
const RUN_CONTEXT_NAMES_ISSUE = `i.id::text IN (r.context_snapshot->>'issueId', r.context_snapshot->'payload'->>'issueId')`;

/** SQL: run `r` touches issue `i` (issue column, context snapshot, checkout, or the issue's activity). */
const RUN_TOUCHES_ISSUE = `(r.issue_id = i.id OR ${RUN_CONTEXT_NAMES_ISSUE} OR r.id = i.checkout_run_id
  OR r.id IN (SELECT a.run_id FROM activity_log a WHERE a.company_id = i.company_id AND a.entity_type = 'issue'
               AND a.entity_id = i.id::text AND a.run_id IS NOT NULL))`;

/** Views that join issues with heartbeat runs and the activity trail; agent inbox. */
@Injectable()
export class IssueRunsService {
  constructor(
    private readonly db: Db,
    private readonly store: IssueStore,
    private readonly access: CompanyAccessService,
    private readonly activity: ActivityService,
  ) {}

  /** Newest first. */
  async activityOf(actor: Actor, ref: string): Promise<ActivityResponseDto[]> {
    const issue = await this.store.load(actor, ref);
    return this.activity.listForEntity(issue.company_id, 'issue', issue.id);
  }

  /** Heartbeat runs touching the issue, newest first. */
  async runsOf(actor: Actor, ref: string) {
    const issue = await this.store.load(actor, ref);
    const rows = await this.db.query<RunRow>(
      `SELECT r.* FROM heartbeat_runs r, issues i
        WHERE i.id = $1 AND r.company_id = i.company_id AND ${RUN_TOUCHES_ISSUE}
        ORDER BY r.created_at DESC, r.id DESC LIMIT 200`,
      [issue.id],
    );
    return rows.map((r) => ({
      runId: r.id,
      status: r.status,
      agentId: r.agent_id,
      adapterType: r.adapter_type,
      startedAt: iso(r.started_at),
      finishedAt: iso(r.finished_at),
      createdAt: iso(r.created_at),
      invocationSource: r.invocation_source,
      usageJson: r.usage_json ?? null,
      resultJson: r.result_json ?? null,
      logBytes: Number(r.log_bytes ?? 0),
    }));
  }

  /** Compact summaries of the issues a run touched; an unknown run has none. */
  async issuesOfRun(actor: Actor, runId: string) {
    if (!isUuid(runId)) return [];
    const [run] = await this.db.query<{ company_id: string }>(`SELECT company_id FROM heartbeat_runs WHERE id = $1`, [runId]);
    if (!run) return [];
    await this.access.assertAccessToKnownCompany(actor, run.company_id);
    const rows = await this.db.query<IssueRow>(
      `SELECT ${issueColumns('i')} FROM heartbeat_runs r JOIN issues i ON i.company_id = r.company_id
        WHERE r.id = $1 AND (r.issue_id = i.id OR ${RUN_CONTEXT_NAMES_ISSUE} OR i.checkout_run_id = r.id
          OR i.id::text IN (SELECT a.entity_id FROM activity_log a WHERE a.run_id = r.id AND a.entity_type = 'issue'))
        ORDER BY i.updated_at DESC`,
      [runId],
    );
    return rows.map(toIssueSummary);
  }

  /**
   * The agent's open assignments (todo, in_progress, blocked), priority first, each with its live run
   * and whether its blockers are all closed.
   */
  async inboxLite(actor: AgentActor) {
    const rows = await this.db.query<
      IssueRow & { blocker_ids: string[]; run_id: string | null; run_status: string | null; run_started_at: Date | null }
    >(
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
        WHERE i.assignee_agent_id = $1 AND i.company_id = $2 AND i.status IN ('todo', 'in_progress', 'blocked') AND i.hidden_at IS NULL
        ORDER BY i.priority_rank, i.updated_at DESC, i.id`,
      [actor.agentId, actor.companyId],
    );
    return rows.map((r) => ({
      id: r.id,
      identifier: r.identifier,
      title: r.title,
      status: r.status,
      priority: r.priority,
      projectId: r.project_id,
      goalId: r.goal_id,
      parentId: r.parent_id,
      updatedAt: iso(r.updated_at),
      activeRun: r.run_id ? { id: r.run_id, status: r.run_status, startedAt: iso(r.run_started_at) } : null,
      dependencyReady: r.blocker_ids.length === 0,
      unresolvedBlockerCount: r.blocker_ids.length,
      unresolvedBlockerIssueIds: r.blocker_ids,
    }));
  }
}
