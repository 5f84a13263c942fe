import { Injectable } from '@nestjs/common';
import { ActivityRecorder } from '../../common/activity/activity-recorder.service';
import type { Actor } from '../../common/auth/actor';
import { conflict, notFound, unprocessable } from '../../common/errors/domain-error';
import { isUuid } from '../../common/http/uuid';
import { Db } from '../../database/db.service';
import { IssueWakeups } from '../issues/issue-wakeups.service';
import type { IssueRow } from '../issues/issue.types';
import { normalizeMarkdown, reanchor, resolveSelector, selectorAt } from './anchoring';
import {
  AnnotationCommentResponseDto,
  AnnotationThreadResponseDto,
  CreateAnnotationThreadDto,
  ListAnnotationsQueryDto,
} from './dto/annotation.dto';
import {
  ANNOTATION_COMMENT_COLUMNS,
  AnnotationCommentRow,
  authorOf,
  DocumentRow,
  RevisionRow,
  THREAD_SELECT,
  ThreadRow,
  toAnnotationCommentResponse,
  toThreadResponse,
} from './document.types';

/** Agents that can be woken at all; the heartbeat engine applies its own policy on top. */

/**
 * Annotation threads on issue documents: anchored to a revision with quote + position selectors,
 * re-anchored on every new revision, open/resolved, with comments that wake the issue's assignee.
 */
@Injectable()
export class AnnotationsService {
  constructor(
    private readonly db: Db,
    private readonly activity: ActivityRecorder,
    private readonly wakeups: IssueWakeups,
  ) {}

  async threadsOf(doc: DocumentRow, q: ListAnnotationsQueryDto): Promise<AnnotationThreadResponseDto[]> {
    const status = q.status ?? 'all';
    const params: unknown[] = [doc.id];
    if (status !== 'all') params.push(status);
    const rows = await this.db.query<ThreadRow>(
      `${THREAD_SELECT} WHERE t.document_id = $1${status !== 'all' ? ' AND t.status = $2' : ''} ORDER BY t.last_activity_at DESC, t.id DESC`,
      params,
    );
    const comments = q.includeComments ? await this.commentsOf(rows.map((r) => r.id)) : undefined;
    return rows.map((t) => toThreadResponse(t, comments ? (comments.get(t.id) ?? []) : undefined));
  }

  /** One thread with its comments; 404 when it is not a thread of that document. */
  async get(doc: DocumentRow, threadId: string): Promise<AnnotationThreadResponseDto> {
    const t = await this.find(doc, threadId);
    return toThreadResponse(t, (await this.commentsOf([t.id])).get(t.id) ?? []);
  }

  /**
   * The base revision must be the latest (409 naming the current one) and the selector must match
   * that revision's text (422). The stored selector is normalised to the markdown range it resolved to.
   */
  async create(
    actor: Actor,
    issue: IssueRow,
    doc: DocumentRow,
    latest: RevisionRow,
    dto: CreateAnnotationThreadDto,
  ): Promise<AnnotationThreadResponseDto> {
    if (dto.baseRevisionId !== doc.latest_revision_id || dto.baseRevisionNumber !== doc.latest_revision_number) {
      throw conflict('The base revision is not the latest revision of the document', 'stale_revision', {
        currentRevisionId: doc.latest_revision_id,
        currentRevisionNumber: doc.latest_revision_number,
      });
    }
    const range = resolveSelector(latest.body, dto.selector);
    if (!range) {
      throw unprocessable('The selector does not match the text of the revision', 'selector_mismatch', { field: 'selector' });
    }
    const selector = selectorAt(latest.body, range.start, range.end, normalizeMarkdown(latest.body));
    const who = authorOf(actor);
    const [{ id }] = await this.db.query<{ id: string }>(
      `INSERT INTO document_annotation_threads (company_id, issue_id, document_id, base_revision_id, base_revision_number,
         anchor_revision_id, anchor_revision_number, original_selector, selector, created_by_agent_id, created_by_user_id)
       VALUES ($1, $2, $3, $4, $5, $4, $5, $6, $7, $8, $9) RETURNING id`,
      [
        issue.company_id,
        issue.id,
        doc.id,
        doc.latest_revision_id,
        doc.latest_revision_number,
        dto.selector,
        selector,
        who.agentId,
        who.userId,
      ],
    );
    const comment = await this.insertComment(actor, issue.company_id, id, dto.body);
    await this.activity.record({
      companyId: issue.company_id,
      action: 'issue.document_annotation_thread_created',
      entityType: 'issue',
      entityId: issue.id,
      actor,
      details: { documentId: doc.id, key: doc.key, threadId: id, commentId: comment.id, revisionId: doc.latest_revision_id },
    });
    await this.wakeups.wakeAssignee(issue, actor, 'document_annotation_thread_created', {
      documentKey: doc.key,
      threadId: id,
      annotationCommentId: comment.id,
    });
    return this.get(doc, id);
  }

  /** A reply bumps the thread's activity time and wakes the assignee. */
  async reply(actor: Actor, issue: IssueRow, doc: DocumentRow, threadId: string, body: string): Promise<AnnotationCommentResponseDto> {
    const t = await this.find(doc, threadId, true);
    const comment = await this.insertComment(actor, issue.company_id, t.id, body);
    await this.db.query(
      `UPDATE document_annotation_threads SET last_activity_at = clock_timestamp(), updated_at = clock_timestamp() WHERE id = $1`,
      [t.id],
    );
    await this.activity.record({
      companyId: issue.company_id,
      action: 'issue.document_annotation_comment_added',
      entityType: 'issue',
      entityId: issue.id,
      actor,
      details: { documentId: doc.id, key: doc.key, threadId: t.id, commentId: comment.id },
    });
    await this.wakeups.wakeAssignee(issue, actor, 'document_annotation_comment_added', {
      documentKey: doc.key,
      threadId: t.id,
      annotationCommentId: comment.id,
    });
    return toAnnotationCommentResponse(comment);
  }

  /** open <-> resolved; resolving stamps resolver and time, reopening clears them; same status: no-op. */
  async setStatus(
    actor: Actor,
    issue: IssueRow,
    doc: DocumentRow,
    threadId: string,
    status: 'open' | 'resolved',
  ): Promise<AnnotationThreadResponseDto> {
    const t = await this.find(doc, threadId, true);
    if (t.status === status) return this.get(doc, t.id);
    const who = authorOf(actor);
    const resolved = status === 'resolved';
    await this.db.query(
      `UPDATE document_annotation_threads
          SET status = $2, resolved_at = CASE WHEN $3 THEN clock_timestamp() END, resolved_by_agent_id = $4, resolved_by_user_id = $5,
              updated_at = clock_timestamp()
        WHERE id = $1`,
      [t.id, status, resolved, resolved ? who.agentId : null, resolved ? who.userId : null],
    );
    await this.activity.record({
      companyId: issue.company_id,
      action: resolved ? 'issue.document_annotation_thread_resolved' : 'issue.document_annotation_thread_reopened',
      entityType: 'issue',
      entityId: issue.id,
      actor,
      details: { documentId: doc.id, key: doc.key, threadId: t.id, status },
    });
    return this.get(doc, t.id);
  }

  /** Every thread of the document is re-anchored against the new revision (active / shifted / orphaned). */
  async reanchorAll(doc: DocumentRow, revision: RevisionRow): Promise<void> {
    const threads = await this.db.query<Pick<ThreadRow, 'id' | 'selector'>>(
      `SELECT id, selector FROM document_annotation_threads WHERE document_id = $1 FOR UPDATE`,
      [doc.id],
    );
    for (const t of threads) {
      const r = reanchor(t.selector, revision.body);
      await this.db.query(
        `UPDATE document_annotation_threads
            SET anchor_state = $2, selector = $3, anchor_revision_id = CASE WHEN $2 = 'orphaned' THEN anchor_revision_id ELSE $4 END,
                anchor_revision_number = CASE WHEN $2 = 'orphaned' THEN anchor_revision_number ELSE $5 END, updated_at = clock_timestamp()
          WHERE id = $1`,
        [t.id, r.state, r.selector, revision.id, revision.revision_number],
      );
    }
  }

  private async find(doc: DocumentRow, threadId: string, lock = false): Promise<ThreadRow> {
    const [t] = isUuid(threadId)
      ? await this.db.query<ThreadRow>(`${THREAD_SELECT} WHERE t.id = $1 AND t.document_id = $2${lock ? ' FOR UPDATE OF t' : ''}`, [
          threadId,
          doc.id,
        ])
      : [];
    if (!t) throw notFound('Annotation thread');
    return t;
  }

  private async commentsOf(threadIds: string[]): Promise<Map<string, AnnotationCommentRow[]>> {
    const out = new Map<string, AnnotationCommentRow[]>(threadIds.map((id) => [id, []]));
    if (!threadIds.length) return out;
    const rows = await this.db.query<AnnotationCommentRow>(
      `SELECT ${ANNOTATION_COMMENT_COLUMNS} FROM document_annotation_comments WHERE thread_id = ANY($1::uuid[]) ORDER BY created_at, id`,
      [threadIds],
    );
    for (const c of rows) out.get(c.thread_id)?.push(c);
    return out;
  }

  private async insertComment(actor: Actor, companyId: string, threadId: string, body: string): Promise<AnnotationCommentRow> {
    const who = authorOf(actor);
    const [c] = await this.db.query<AnnotationCommentRow>(
      `INSERT INTO document_annotation_comments (company_id, thread_id, body, author_agent_id, author_user_id, run_id)
       VALUES ($1, $2, $3, $4, $5, $6) RETURNING ${ANNOTATION_COMMENT_COLUMNS}`,
      [companyId, threadId, body, who.agentId, who.userId, who.runId],
    );
    return c;
  }
}
