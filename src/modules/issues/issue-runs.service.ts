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
    return this.activity.listForEntity(issue.companyId, 'issue', issue.id);
  }

  /** Heartbeat runs touching the issue, newest first. */
  async runsOf(routeCompanyId: string | undefined, ref: string) {
    const issue = await this.store.load(routeCompanyId, ref);
    const rows = await this.issues.runsTouching(issue.companyId, issue.id);
    return rows.map((r) => ({
      runId: r.id,
      status: r.status,
      agentId: r.agentId,
      adapterType: r.adapterType,
      startedAt: iso(r.startedAt),
      finishedAt: iso(r.finishedAt),
      createdAt: iso(r.createdAt),
      invocationSource: r.invocationSource,
      usageJson: r.usageJson ?? null,
      resultJson: r.resultJson ?? null,
      logBytes: Number(r.logBytes ?? 0),
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
      projectId: r.projectId,
      goalId: r.goalId,
      parentId: r.parentId,
      updatedAt: iso(r.updatedAt),
      activeRun: r.runId ? { id: r.runId, status: r.runStatus, startedAt: iso(r.runStartedAt) } : null,
      dependencyReady: r.blockerIds.length === 0,
      unresolvedBlockerCount: r.blockerIds.length,
      unresolvedBlockerIssueIds: r.blockerIds,
    }));
  }
}
