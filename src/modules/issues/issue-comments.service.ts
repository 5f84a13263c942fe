import { Injectable } from '@nestjs/common';
import { ActivityRecorder } from '../../common/activity/activity-recorder.service';
import type { Actor } from '../../common/auth/actor';
import { badRequest, forbidden, notFound } from '../../common/errors/domain-error';
import { WorkCancellation } from '../../common/events/work-cancellation';
import { isUuid } from '../../common/http/uuid';
import { Db } from '../../database/db.service';
import { returning } from './returning';
import { CommentResponseDto, CreateCommentDto, ListCommentsQueryDto } from './dto/comment.dto';
import { IssueCheckout } from './issue-checkout.service';
import { IssueStore } from './issue-store.service';
import { COMMENT_COLUMNS, CommentRow, isClosed, ISSUE_COLUMNS, IssueRow } from './issue.types';
import { IssueWakeups } from './issue-wakeups.service';
import { HeartbeatRunsService } from '../heartbeat/heartbeat-runs.service';

export const COMMENT_LIMIT_CAP = 500;

export function toCommentResponse(c: CommentRow): CommentResponseDto {
  return {
    id: c.id,
    companyId: c.company_id,
    issueId: c.issue_id,
    body: c.body,
    authorAgentId: c.author_agent_id,
    authorUserId: c.author_user_id,
    runId: c.run_id,
    createdAt: new Date(c.created_at).toISOString(),
    updatedAt: new Date(c.updated_at).toISOString(),
  };
}

/** Comments: list with a cursor, get one, add (reopen, interrupt, wakeups), shared by PATCH issue. */
@Injectable()
export class IssueComments {
  constructor(
    private readonly db: Db,
    private readonly store: IssueStore,
    private readonly checkout: IssueCheckout,
    private readonly wakeups: IssueWakeups,
    private readonly cancellation: WorkCancellation,
    private readonly recorder: ActivityRecorder,
    private readonly runs: HeartbeatRunsService,
  ) {}

  /** Every comment of a company's issues, oldest first (portability export). */
  async allOfCompany(companyId: string): Promise<CommentRow[]> {
    return this.db.query<CommentRow>(`SELECT ${COMMENT_COLUMNS} FROM issue_comments WHERE company_id = $1 ORDER BY created_at, id`, [
      companyId,
    ]);
  }

  async list(actor: Actor, ref: string, q: ListCommentsQueryDto): Promise<CommentResponseDto[]> {
    const issue = await this.store.load(actor, ref);
    const order = q.order === 'desc' ? 'DESC' : 'ASC';
    const limit = Math.min(q.limit ?? COMMENT_LIMIT_CAP, COMMENT_LIMIT_CAP);
    const params: unknown[] = [issue.id, limit];
    let after = '';
    const cursor = q.afterCommentId ?? q.after;
    if (cursor) {
      const [c] = await this.db.query<CommentRow>(`SELECT id FROM issue_comments WHERE id = $1 AND issue_id = $2`, [cursor, issue.id]);
      if (!c) throw badRequest('after/afterCommentId must name a comment of this issue', { field: 'afterCommentId' }, 'invalid_cursor');
      params.push(c.id);
      // compared in SQL: timestamps keep their microseconds
      after = ` AND (created_at, id) > (SELECT created_at, id FROM issue_comments WHERE id = $3)`;
    }
    const rows = await this.db.query<CommentRow>(
      `SELECT ${COMMENT_COLUMNS} FROM issue_comments WHERE issue_id = $1${after} ORDER BY created_at ${order}, id ${order} LIMIT $2`,
      params,
    );
    return rows.map(toCommentResponse);
  }

  /** Comments waiting for the agent they wake: their wake is queued, deferred behind a live run, or in a run not started yet. Oldest first. */
  async queued(actor: Actor, ref: string): Promise<CommentResponseDto[]> {
    const issue = await this.store.load(actor, ref);
    const ids = (await this.runs.pendingWakeCommentIds(issue.company_id, issue.id)).filter(isUuid);
    if (ids.length === 0) return [];
    const rows = await this.db.query<CommentRow>(
      `SELECT ${COMMENT_COLUMNS} FROM issue_comments WHERE issue_id = $1 AND id = ANY($2::uuid[]) ORDER BY created_at, id`,
      [issue.id, ids],
    );
    return rows.map(toCommentResponse);
  }

  async get(actor: Actor, ref: string, commentId: string): Promise<CommentResponseDto> {
    const issue = await this.store.load(actor, ref);
    const [c] = isUuid(commentId)
      ? await this.db.query<CommentRow>(`SELECT ${COMMENT_COLUMNS} FROM issue_comments WHERE id = $1 AND issue_id = $2`, [
          commentId,
          issue.id,
        ])
      : [];
    if (!c) throw notFound('Comment');
    return toCommentResponse(c);
  }

  /** POST comment: accepted on open and closed issues; `reopen` acts only on done or cancelled. */
  async create(actor: Actor, ref: string, dto: CreateCommentDto): Promise<CommentResponseDto> {
    const issue = await this.store.load(actor, ref, { lock: true });
    if (dto.interrupt) this.assertMayInterrupt(actor);
    await this.checkout.assertRunOwnership(actor, issue, 'comment');
    let current = issue;
    if (dto.reopen && isClosed(issue.status)) {
      [current] = await returning<IssueRow>(
        this.db,
        `UPDATE issues SET status = 'todo', completed_at = NULL, cancelled_at = NULL, updated_at = now() WHERE id = $1 RETURNING ${ISSUE_COLUMNS}`,
        [issue.id],
      );
      await this.recorder.record({
        companyId: issue.company_id,
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
  async add(actor: Actor, issue: IssueRow, body: string, opts: { touch?: boolean } = {}): Promise<CommentRow> {
    const [comment] = await this.db.query<CommentRow>(
      `INSERT INTO issue_comments (company_id, issue_id, body, author_agent_id, author_user_id, run_id)
       VALUES ($1, $2, $3, $4, $5, $6) RETURNING ${COMMENT_COLUMNS}`,
      [
        issue.company_id,
        issue.id,
        body,
        actor.kind === 'agent' ? actor.agentId : null,
        actor.kind === 'board' ? actor.userId : null,
        actor.kind === 'agent' ? (actor.runId ?? null) : null,
      ],
    );
    if (opts.touch !== false) await this.db.query(`UPDATE issues SET updated_at = now() WHERE id = $1`, [issue.id]);
    await this.wakeups.commented(issue, comment, actor);
    return comment;
  }

  assertMayInterrupt(actor: Actor): void {
    if (actor.kind !== 'board') throw forbidden('Only board users may interrupt', { reason: 'deny_unsupported_action' });
  }

  /** Cancels the assignee's active run for this issue and records the interruption. */
  async interrupt(actor: Actor, issue: IssueRow): Promise<void> {
    if (issue.assignee_agent_id) {
      await this.cancellation.cancel(
        { companyId: issue.company_id, agentIds: [issue.assignee_agent_id], issueId: issue.id },
        'issue_interrupted',
      );
    }
    await this.recorder.record({
      companyId: issue.company_id,
      action: 'issue.interrupted',
      entityType: 'issue',
      entityId: issue.id,
      actor,
      details: { assigneeAgentId: issue.assignee_agent_id, checkoutRunId: issue.checkout_run_id },
    });
  }
}
