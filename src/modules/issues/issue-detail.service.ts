import { Injectable } from '@nestjs/common';
import { isUuid } from '../../common/http/uuid';
import { iso } from '../../database/row-mapping';
import { CommentResponseDto } from './dto/comment.dto';
import { IssueDetailResponseDto, IssueSummaryDto, LegacyPlanDocumentDto } from './dto/issue.dto';
import { IssueCommentsRepository, toCommentResponse } from './issue-comments.repository';
import { IssueInteractions } from './issue-interactions.service';
import { IssueReadContributions } from './issue-read-contributions.port';
import { IssueStore } from './issue-store.service';
import { IssueRecord } from './issue.types';
import { IssuesRepository } from './issues.repository';
import { IssueGoalRecord, IssueContextRepository, IssueProjectRecord } from './issue-context.repository';
import { toIssueSummary } from './issue-view';
import { ProjectsService } from '../projects/projects.service';

const PLAN_BLOCK = /<plan>([\s\S]*?)<\/plan>/i;
const PROJECT_LINK = /project:\/\/([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})/gi;

const toGoal = (g: IssueGoalRecord) => ({ id: g.id, title: g.title, level: g.level, status: g.status, parentId: g.parentId });

/** Older issues kept their plan inside the description; it is exposed read-only. */
export function legacyPlanOf(description: string | null): LegacyPlanDocumentDto | null {
  const m = description ? PLAN_BLOCK.exec(description) : null;
  if (!m) return null;
  return { key: 'plan', title: 'Plan', format: 'markdown', body: m[1].trim(), source: 'issue_description' };
}

/** GET one issue with its related objects, and the reduced heartbeat context for agents. */
@Injectable()
export class IssueDetailService {
  private defaultGoalColumn?: Promise<boolean>;

  constructor(
    private readonly issues: IssuesRepository,
    private readonly comments: IssueCommentsRepository,
    private readonly store: IssueStore,
    private readonly interactions: IssueInteractions,
    private readonly parts: IssueReadContributions,
    private readonly context: IssueContextRepository,
    private readonly projects: ProjectsService,
  ) {}

  async get(routeCompanyId: string | undefined, ref: string): Promise<IssueDetailResponseDto> {
    const issue = await this.store.load(routeCompanyId, ref);
    const project = await this.project(issue);
    const [base, projectView, goal, ancestors, { blockedBy, blocks }, mentionedProjects, documents, workProducts] = await Promise.all([
      this.store.toResponse(issue),
      project ? this.projects.view(issue.companyId, project.id) : null,
      this.goal(issue, project),
      this.ancestors(issue),
      this.issues.relatedBoth(issue.companyId, issue.id).then((r) => ({
        blockedBy: r.blockedBy.map(toIssueSummary),
        blocks: r.blocks.map(toIssueSummary),
      })),
      this.mentionedProjects(issue),
      this.parts.documents(issue.companyId, issue.id),
      this.parts.workProducts(issue.companyId, issue.id),
    ]);
    return {
      ...base,
      // the project as its own page shows it (the issue page reads its workspaces and codebase)
      project: projectView,
      goal: goal ? toGoal(goal) : null,
      ancestors,
      blockedBy,
      blocks,
      planDocument: documents.planDocument as Record<string, unknown> | null,
      documentSummaries: documents.documentSummaries as unknown as Record<string, unknown>[],
      legacyPlanDocument: legacyPlanOf(issue.description),
      mentionedProjects,
      currentExecutionWorkspace: null,
      workProducts: workProducts as unknown as Record<string, unknown>[],
    };
  }

  /** What a woken agent needs to start: a reduced issue, its place, and where the conversation stands. */
  async heartbeatContext(routeCompanyId: string | undefined, ref: string, wakeCommentId?: string) {
    const issue = await this.store.load(routeCompanyId, ref);
    const project = await this.project(issue);
    const [goal, ancestors, blockers, cursor, wakeComment, attachments, documents, planThreads, interactions] = await Promise.all([
      this.goal(issue, project),
      this.ancestors(issue),
      this.related(issue, 'blockedBy'),
      this.comments.cursorOf(issue.companyId, issue.id),
      this.comment(issue, wakeCommentId),
      this.parts.attachments(issue.companyId, issue.id),
      this.parts.documents(issue.companyId, issue.id),
      this.parts.planReviewThreads(issue.companyId, issue.id),
      this.interactions.ofIssue(issue.companyId, issue.id),
    ]);
    const plan = documents.planDocument;
    return {
      issue: {
        id: issue.id,
        identifier: issue.identifier,
        title: issue.title,
        description: issue.description,
        status: issue.status,
        priority: issue.priority,
        projectId: issue.projectId,
        goalId: issue.goalId,
        parentId: issue.parentId,
        assigneeAgentId: issue.assigneeAgentId,
        assigneeUserId: issue.assigneeUserId,
        checkoutRunId: issue.checkoutRunId,
        blockedBy: blockers,
        updatedAt: iso(issue.updatedAt),
      },
      ancestors,
      project: project ? { id: project.id, name: project.name, status: project.status, pausedAt: iso(project.pausedAt) } : null,
      goal: goal ? { id: goal.id, title: goal.title, level: goal.level, status: goal.status } : null,
      commentCursor: {
        totalComments: cursor.total,
        latestCommentId: cursor.latestId,
        latestCommentAt: iso(cursor.latestAt),
      },
      ...(wakeComment ? { wakeComment } : {}),
      attachments,
      // questions the agent asked a human on this issue, with the answers (an answer wakes the agent with its interactionId)
      interactions,
      ...(plan
        ? {
            planReviewContext: {
              documentKey: plan.key,
              latestRevisionId: plan.latestRevisionId,
              latestRevisionNumber: plan.latestRevisionNumber,
              lockedAt: plan.lockedAt,
              annotationThreads: planThreads,
              approvalOutcome: null,
            },
          }
        : {}),
    };
  }

  private async comment(issue: IssueRecord, commentId?: string): Promise<CommentResponseDto | null> {
    if (!commentId || !isUuid(commentId)) return null;
    const c = await this.comments.findOfIssue(issue.companyId, issue.id, commentId);
    return c ? toCommentResponse(c) : null;
  }

  private async project(issue: IssueRecord): Promise<IssueProjectRecord | null> {
    if (!issue.projectId) return null;
    return this.context.project(issue.companyId, issue.projectId);
  }

  /** Precedence: the issue's own goal, else its project's goal, else (no project) the company default goal. */
  private async goal(issue: IssueRecord, project: IssueProjectRecord | null): Promise<IssueGoalRecord | null> {
    const goalId = issue.goalId ?? project?.goalId ?? null;
    if (goalId) return this.context.goal(issue.companyId, goalId);
    if (issue.projectId) return null;
    return this.context.companyDefaultGoal(issue.companyId, await this.hasDefaultGoalColumn());
  }

  /** `goals.is_company_default` is added by the goals module; without it the oldest company-level goal is the default. */
  private hasDefaultGoalColumn(): Promise<boolean> {
    this.defaultGoalColumn ??= this.context.hasDefaultGoalColumn();
    return this.defaultGoalColumn;
  }

  /** Parents up to the root, nearest first. */
  private async ancestors(issue: IssueRecord): Promise<IssueSummaryDto[]> {
    if (!issue.parentId) return [];
    const rows = await this.issues.ancestors(issue.companyId, issue.parentId);
    return rows.map(toIssueSummary);
  }

  private async related(issue: IssueRecord, dir: 'blockedBy' | 'blocks'): Promise<IssueSummaryDto[]> {
    const rows = await this.issues.related(issue.companyId, issue.id, dir);
    return rows.map(toIssueSummary);
  }

  /** Projects linked as `project://<id>` in the description (same company only). */
  private async mentionedProjects(issue: IssueRecord) {
    const ids = [...new Set([...(issue.description ?? '').matchAll(PROJECT_LINK)].map((m) => m[1].toLowerCase()))];
    if (!ids.length) return [];
    const rows = await this.context.mentionedProjects(issue.companyId, ids);
    return rows.map((p) => ({ id: p.id, name: p.name, urlKey: p.urlKey, status: p.status }));
  }
}
