import { Injectable } from '@nestjs/common';
import type { Actor, AgentActor } from '../../common/auth/actor';
import { isUuid } from '../../common/http/uuid';
import { iso } from '../../database/row-mapping';
import { ActivityResponseDto } from '../activity/dto/activity.dto';
import { ActivityService } from '../activity/activity.service';
import { IssueStore } from './issue-store.service';
import { IssueRunsRepository } from './issue-runs.repository';
import { toIssueSummary } from './issue-view';

/** Views that join issues with heartbeat runs and the activity trail; agent inbox. */
@Injectable()
export class IssueRunsService {
  constructor(
    private readonly issues: IssueRunsRepository,
    private readonly store: IssueStore,
    private readonly activity: ActivityService,
  ) {}

  /** Newest first. */
  async activityOf(routeCompanyId: string | undefined, ref: string): Promise<ActivityResponseDto[]> {
    const issue = await this.store.load(routeCompanyId, ref);
    return this.activity.listForEntity(issue.company_id, 'issue', issue.id);
  }

  /** Heartbeat runs touching the issue, newest first. */
  async runsOf(routeCompanyId: string | undefined, ref: string) {
    const issue = await this.store.load(routeCompanyId, ref);
    const rows = await this.issues.runsTouching(issue.company_id, issue.id);
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

  /**
   * Compact summaries of the issues a run touched; an unknown run, and another company's, have none.
   * `routeCompany`: the run's company as the guard resolved and checked it (undefined: unknown or not
   * the caller's).
   */
  async issuesOfRun(actor: Actor, runId: string, routeCompany: string | undefined) {
    if (!isUuid(runId) || !routeCompany) return [];
    const companyId = routeCompany;
    const rows = await this.issues.touchedByRun(companyId, runId);
    return rows.map(toIssueSummary);
  }

  /**
   * The agent's open assignments (todo, in_progress, blocked), priority first, each with its live run
   * and whether its blockers are all closed.
   */
  async inboxLite(actor: AgentActor) {
    const rows = await this.issues.inboxLite(actor.companyId, actor.agentId);
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
