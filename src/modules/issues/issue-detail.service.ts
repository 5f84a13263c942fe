import { Injectable } from '@nestjs/common';
import type { Actor } from '../../common/auth/actor';
import { isUuid } from '../../common/http/uuid';
import { Db } from '../../database/db.service';
import { CommentResponseDto } from './dto/comment.dto';
import { IssueDetailResponseDto, IssueSummaryDto, LegacyPlanDocumentDto } from './dto/issue.dto';
import { toCommentResponse } from './issue-comments.service';
import { IssueInteractions } from './issue-interactions.service';
import { iso, IssueStore, toIssueSummary } from './issue-store.service';
import { COMMENT_COLUMNS, CommentRow, issueColumns, IssueRow } from './issue.types';
import { attachmentSummariesOf } from '../attachments/attachment.types';
import { workProductsOf } from '../artifacts/work-product.types';
import { issueDocumentsView, planReviewThreads } from '../documents/issue-document-reads';

const PLAN_BLOCK = /<plan>([\s\S]*?)<\/plan>/i;
const PROJECT_LINK = /project:\/\/([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})/gi;

interface ProjectRow {
  id: string;
  name: string;
  url_key: string;
  status: string;
  goal_id: string | null;
  color: string | null;
  paused_at: Date | null;
  archived_at: Date | null;
}

interface GoalRow {
  id: string;
  title: string;
  level: string;
  status: string;
  parent_id: string | null;
}

const toProject = (p: ProjectRow) => ({
  id: p.id,
  name: p.name,
  urlKey: p.url_key,
  status: p.status,
  goalId: p.goal_id,
  color: p.color,
  pausedAt: iso(p.paused_at),
  archivedAt: iso(p.archived_at),
});
const toGoal = (g: GoalRow) => ({ id: g.id, title: g.title, level: g.level, status: g.status, parentId: g.parent_id });

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
    private readonly db: Db,
    private readonly store: IssueStore,
    private readonly interactions: IssueInteractions,
  ) {}

  async get(actor: Actor, ref: string): Promise<IssueDetailResponseDto> {
    const issue = await this.store.load(actor, ref);
    const project = await this.project(issue);
    const [base, goal, ancestors, blockedBy, blocks, mentionedProjects, documents, workProducts] = await Promise.all([
      this.store.toResponse(issue),
      this.goal(issue, project),
      this.ancestors(issue),
      this.related(issue.id, 'blockedBy'),
      this.related(issue.id, 'blocks'),
      this.mentionedProjects(issue),
      issueDocumentsView(this.db, issue.id),
      workProductsOf(this.db, issue.id),
    ]);
    return {
      ...base,
      project: project ? toProject(project) : null,
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
  async heartbeatContext(actor: Actor, ref: string, wakeCommentId?: string) {
    const issue = await this.store.load(actor, ref);
    const project = await this.project(issue);
    const [goal, ancestors, blockers, cursor, wakeComment, attachments, documents, planThreads, interactions] = await Promise.all([
      this.goal(issue, project),
      this.ancestors(issue),
      this.related(issue.id, 'blockedBy'),
      this.db.query<{ total: number; latest_id: string | null; latest_at: Date | null }>(
        `SELECT count(*)::int AS total,
                (array_agg(id ORDER BY created_at DESC, id DESC))[1] AS latest_id, max(created_at) AS latest_at
           FROM issue_comments WHERE issue_id = $1`,
        [issue.id],
      ),
      this.comment(issue.id, wakeCommentId),
      attachmentSummariesOf(this.db, issue.id),
      issueDocumentsView(this.db, issue.id),
      planReviewThreads(this.db, issue.id),
      this.interactions.ofIssue(issue.company_id, issue.id),
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
        projectId: issue.project_id,
        goalId: issue.goal_id,
        parentId: issue.parent_id,
        assigneeAgentId: issue.assignee_agent_id,
        assigneeUserId: issue.assignee_user_id,
        checkoutRunId: issue.checkout_run_id,
        blockedBy: blockers,
        updatedAt: iso(issue.updated_at),
      },
      ancestors,
      project: project ? { id: project.id, name: project.name, status: project.status, pausedAt: iso(project.paused_at) } : null,
      goal: goal ? { id: goal.id, title: goal.title, level: goal.level, status: goal.status } : null,
      commentCursor: {
        totalComments: cursor[0].total,
        latestCommentId: cursor[0].latest_id,
        latestCommentAt: iso(cursor[0].latest_at),
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

  private async comment(issueId: string, commentId?: string): Promise<CommentResponseDto | null> {
    if (!commentId || !isUuid(commentId)) return null;
    const [c] = await this.db.query<CommentRow>(`SELECT ${COMMENT_COLUMNS} FROM issue_comments WHERE id = $1 AND issue_id = $2`, [
      commentId,
      issueId,
    ]);
    return c ? toCommentResponse(c) : null;
  }

  private async project(issue: IssueRow): Promise<ProjectRow | null> {
    if (!issue.project_id) return null;
    const [p] = await this.db.query<ProjectRow>(
      `SELECT id, name, url_key, status, goal_id, color, paused_at, archived_at FROM projects WHERE id = $1`,
      [issue.project_id],
    );
    return p ?? null;
  }

  /** Precedence: the issue's own goal, else its project's goal, else (no project) the company default goal. */
  private async goal(issue: IssueRow, project: ProjectRow | null): Promise<GoalRow | null> {
    const cols = 'id, title, level, status, parent_id';
    const goalId = issue.goal_id ?? project?.goal_id ?? null;
    if (goalId) {
      const [g] = await this.db.query<GoalRow>(`SELECT ${cols} FROM goals WHERE id = $1`, [goalId]);
      return g ?? null;
    }
    if (issue.project_id) return null;
    const preferFlag = (await this.hasDefaultGoalColumn()) ? 'is_company_default DESC,' : '';
    const where = preferFlag ? `(is_company_default OR level = 'company')` : `level = 'company'`;
    const [g] = await this.db.query<GoalRow>(
      `SELECT ${cols} FROM goals WHERE company_id = $1 AND ${where} ORDER BY ${preferFlag} created_at, id LIMIT 1`,
      [issue.company_id],
    );
    return g ?? null;
  }

  /** `goals.is_company_default` is added by the goals module; without it the oldest company-level goal is the default. */
  private hasDefaultGoalColumn(): Promise<boolean> {
    this.defaultGoalColumn ??= this.db
      .query(`SELECT 1 FROM information_schema.columns WHERE table_name = 'goals' AND column_name = 'is_company_default'`)
      .then((r) => r.length > 0);
    return this.defaultGoalColumn;
  }

  /** Parents up to the root, nearest first. */
  private async ancestors(issue: IssueRow): Promise<IssueSummaryDto[]> {
    if (!issue.parent_id) return [];
    const rows = await this.db.query<IssueRow>(
      `WITH RECURSIVE up AS (
         SELECT i.*, 1 AS depth FROM issues i WHERE i.id = $1
         UNION ALL
         SELECT i.*, up.depth + 1 FROM issues i JOIN up ON i.id = up.parent_id WHERE up.depth < 100)
       SELECT ${issueColumns('up')} FROM up ORDER BY depth`,
      [issue.parent_id],
    );
    return rows.map(toIssueSummary);
  }

  private async related(issueId: string, dir: 'blockedBy' | 'blocks'): Promise<IssueSummaryDto[]> {
    const [mine, other] = dir === 'blockedBy' ? ['related_issue_id', 'issue_id'] : ['issue_id', 'related_issue_id'];
    const rows = await this.db.query<IssueRow>(
      `SELECT ${issueColumns('i')} FROM issue_relations r JOIN issues i ON i.id = r.${other}
        WHERE r.${mine} = $1 AND r.type = 'blocks' ORDER BY r.created_at, i.id`,
      [issueId],
    );
    return rows.map(toIssueSummary);
  }

  /** Projects linked as `project://<id>` in the description (same company only). */
  private async mentionedProjects(issue: IssueRow) {
    const ids = [...new Set([...(issue.description ?? '').matchAll(PROJECT_LINK)].map((m) => m[1].toLowerCase()))];
    if (!ids.length) return [];
    const rows = await this.db.query<ProjectRow>(
      `SELECT id, name, url_key, status, goal_id, color, paused_at, archived_at FROM projects WHERE company_id = $1 AND id = ANY($2::uuid[])`,
      [issue.company_id, ids],
    );
    return rows.map((p) => ({ id: p.id, name: p.name, urlKey: p.url_key, status: p.status }));
  }
}
