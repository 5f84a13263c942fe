import { Injectable } from '@nestjs/common';
import { ActivityRecorder } from '../../common/activity/activity-recorder.service';
import type { Actor } from '../../common/auth/actor';
import { forbidden, notFound } from '../../common/errors/domain-error';
import { WorkCancellation } from '../../common/events/work-cancellation.port';
import { isUuid } from '../../common/http/uuid';
import { CommentResponseDto, CreateCommentDto, ListCommentsQueryDto } from './dto/comment.dto';
import { IssueCheckout } from './issue-checkout.service';
import { IssueStore } from './issue-store.service';
import { CommentRecord, isClosed, IssueRecord } from './issue.types';
import { IssueCommentsRepository, toCommentResponse } from './issue-comments.repository';
import { issueError } from './issues.errors';
import { IssuesRepository } from './issues.repository';
import { IssueWakeups } from './issue-wakeups.service';
import { HeartbeatRunsService } from '../heartbeat/heartbeat-runs.service';

export const COMMENT_LIMIT_CAP = 500;

/** Comments: list with a cursor, get one, add (reopen, interrupt, wakeups), shared by PATCH issue. */
@Injectable()
export class IssueComments {
  constructor(
    private readonly comments: IssueCommentsRepository,
    private readonly issues: IssuesRepository,
    private readonly store: IssueStore,
    private readonly checkout: IssueCheckout,
    private readonly wakeups: IssueWakeups,
    private readonly cancellation: WorkCancellation,
    private readonly recorder: ActivityRecorder,
    private readonly runs: HeartbeatRunsService,
  ) {}

  /** Every comment of a company's issues, oldest first (portability export). */
  async allOfCompany(companyId: string): Promise<CommentRecord[]> {
    return this.comments.allOfCompany(companyId);
  }

  /** Whether the comment belongs to the issue of the company (an attachment may name it). */
  async existsInIssue(companyId: string, issueId: string, commentId: string): Promise<boolean> {
    return (await this.comments.idOnIssue(companyId, issueId, commentId)) !== null;
  }

  async list(routeCompanyId: string | undefined, ref: string, q: ListCommentsQueryDto): Promise<CommentResponseDto[]> {
    const issue = await this.store.load(routeCompanyId, ref);
    const order = q.order === 'desc' ? 'DESC' : 'ASC';
    const limit = Math.min(q.limit ?? COMMENT_LIMIT_CAP, COMMENT_LIMIT_CAP);
    const cursor = q.afterCommentId ?? q.after;
    let afterId: string | undefined;
    if (cursor) {
      const id = await this.comments.idOnIssue(issue.companyId, issue.id, cursor);
      if (!id) throw issueError('invalid_cursor', 'after/afterCommentId must name a comment of this issue', { field: 'afterCommentId' });
      afterId = id;
    }
    const rows = await this.comments.page(issue.companyId, issue.id, { order, limit, afterId });
    return rows.map(toCommentResponse);
  }

  /** Comments waiting for the agent they wake: their wake is queued, deferred behind a live run, or in a run not started yet. Oldest first. */
  async queued(routeCompanyId: string | undefined, ref: string): Promise<CommentResponseDto[]> {
    const issue = await this.store.load(routeCompanyId, ref);
    const ids = (await this.runs.pendingWakeCommentIds(issue.companyId, issue.id)).filter(isUuid);
    if (ids.length === 0) return [];
    const rows = await this.comments.manyOfIssue(issue.companyId, issue.id, ids);
    return rows.map(toCommentResponse);
  }

  async get(routeCompanyId: string | undefined, ref: string, commentId: string): Promise<CommentResponseDto> {
    const issue = await this.store.load(routeCompanyId, ref);
    const c = isUuid(commentId) ? await this.comments.findOfIssue(issue.companyId, issue.id, commentId) : null;
    if (!c) throw notFound('Comment');
    return toCommentResponse(c);
  }

  /** POST comment: accepted on open and closed issues; `reopen` acts only on done or cancelled. */
  async create(actor: Actor, routeCompanyId: string | undefined, ref: string, dto: CreateCommentDto): Promise<CommentResponseDto> {
    const issue = await this.store.load(routeCompanyId, ref, { lock: true });
    if (dto.interrupt) this.assertMayInterrupt(actor);
    await this.checkout.assertRunOwnership(actor, issue, 'comment');
    let current = issue;
    if (dto.reopen && isClosed(issue.status)) {
      current = await this.issues.reopen(issue.companyId, issue.id);
      await this.recorder.record({
        companyId: issue.companyId,
        action: 'issue.updated',
        entityType: 'issue',
        entityId: issue.id,
        actor,
        details: { status: 'todo', previousStatus: issue.status, reopened: true, via: 'comment' },
      });
    }
    const comment = await this.add(actor, current, dto.body, { touch: current === issue });
    if (dto.interrupt) await this.interrupt(actor, current);
    return toCommentResponse(comment);
  }

  /** Inserts a comment, bumps the issue's updatedAt and wakes the assignee and mentioned agents. */
  async add(actor: Actor, issue: IssueRecord, body: string, opts: { touch?: boolean } = {}): Promise<CommentRecord> {
    const comment = await this.comments.insert(issue.companyId, {
      issueId: issue.id,
      body,
      authorAgentId: actor.kind === 'agent' ? actor.agentId : null,
      authorUserId: actor.kind === 'board' ? actor.userId : null,
      runId: actor.kind === 'agent' ? (actor.runId ?? null) : null,
    });
    if (opts.touch !== false) await this.issues.touch(issue.companyId, issue.id);
    await this.wakeups.commented(issue, comment, actor);
    return comment;
  }

  assertMayInterrupt(actor: Actor): void {
    if (actor.kind !== 'board') throw forbidden('Only board users may interrupt', { reason: 'deny_unsupported_action' });
  }

  /** Cancels the assignee's active run for this issue and records the interruption. */
  async interrupt(actor: Actor, issue: IssueRecord): Promise<void> {
    if (issue.assigneeAgentId) {
      await this.cancellation.cancel(
        { companyId: issue.companyId, agentIds: [issue.assigneeAgentId], issueId: issue.id },
        'issue_interrupted',
      );
    }
    await this.recorder.record({
      companyId: issue.companyId,
      action: 'issue.interrupted',
      entityType: 'issue',
      entityId: issue.id,
      actor,
      details: { assigneeAgentId: issue.assigneeAgentId, checkoutRunId: issue.checkoutRunId },
    });
  }
}
