import { Injectable } from '@nestjs/common';
import { ActivityRecorder } from '../../common/activity/activity-recorder.service';
import type { Actor } from '../../common/auth/actor';
import { notFound } from '../../common/errors/domain-error';
import { isUuid } from '../../common/http/uuid';
import { IssueWakeups } from '../issues/issue-wakeups.service';
import { normalizeMarkdown, reanchor, resolveSelector, selectorAt } from './anchoring';
import {
  AnnotationCommentResponseDto,
  AnnotationThreadResponseDto,
  CreateAnnotationThreadDto,
  ListAnnotationsQueryDto,
} from './dto/annotation.dto';
import { AnnotationCommentRecord, AnnotationsRepository, AnnotationThreadRecord } from './annotations.repository';
import { authorOf, toAnnotationCommentResponse, toThreadResponse } from './document.types';
import { documentError } from './documents.errors';
import type { IssueRecord } from '../issues/issue.types';
import type { DocumentRecord, RevisionRecord } from './documents.repository';

/** Agents that can be woken at all; the heartbeat engine applies its own policy on top. */

/**
 * Annotation threads on issue documents: anchored to a revision with quote + position selectors,
 * re-anchored on every new revision, open/resolved, with comments that wake the issue's assignee.
 */
@Injectable()
export class AnnotationsService {
  constructor(
    private readonly annotations: AnnotationsRepository,
    private readonly activity: ActivityRecorder,
    private readonly wakeups: IssueWakeups,
  ) {}

  async threadsOf(doc: DocumentRecord, q: ListAnnotationsQueryDto): Promise<AnnotationThreadResponseDto[]> {
    const status = q.status ?? 'all';
    const rows = await this.annotations.threadsOfDocument(doc.companyId, doc.id, status !== 'all' ? status : null);
    const comments = q.includeComments
      ? await this.commentsOf(
          doc.companyId,
          rows.map((r) => r.id),
        )
      : undefined;
    return rows.map((t) => toThreadResponse(t, comments ? (comments.get(t.id) ?? []) : undefined));
  }

  /** One thread with its comments; 404 when it is not a thread of that document. */
  async get(doc: DocumentRecord, threadId: string): Promise<AnnotationThreadResponseDto> {
    const t = await this.find(doc, threadId);
    return toThreadResponse(t, (await this.commentsOf(doc.companyId, [t.id])).get(t.id) ?? []);
  }

  /**
   * The base revision must be the latest (409 naming the current one) and the selector must match
   * that revision's text (422). The stored selector is normalised to the markdown range it resolved to.
   */
  async create(
    actor: Actor,
    issue: IssueRecord,
    doc: DocumentRecord,
    latest: RevisionRecord,
    dto: CreateAnnotationThreadDto,
  ): Promise<AnnotationThreadResponseDto> {
    if (dto.baseRevisionId !== doc.latestRevisionId || dto.baseRevisionNumber !== doc.latestRevisionNumber) {
      throw documentError('stale_revision', 'The base revision is not the latest revision of the document', {
        currentRevisionId: doc.latestRevisionId,
        currentRevisionNumber: doc.latestRevisionNumber,
      });
    }
    const range = resolveSelector(latest.body, dto.selector);
    if (!range) {
      throw documentError('selector_mismatch', 'The selector does not match the text of the revision', { field: 'selector' });
    }
    const selector = selectorAt(latest.body, range.start, range.end, normalizeMarkdown(latest.body));
    const id = await this.annotations.insertThread(
      issue.companyId,
      {
        issueId: issue.id,
        documentId: doc.id,
        revisionId: doc.latestRevisionId,
        revisionNumber: doc.latestRevisionNumber,
        originalSelector: dto.selector,
        selector,
      },
      authorOf(actor),
    );
    const comment = await this.insertComment(actor, issue.companyId, id, dto.body);
    await this.activity.record({
      companyId: issue.companyId,
      action: 'issue.document_annotation_thread_created',
      entityType: 'issue',
      entityId: issue.id,
      actor,
      details: { documentId: doc.id, key: doc.key, threadId: id, commentId: comment.id, revisionId: doc.latestRevisionId },
    });
    await this.wakeups.wakeAssignee(issue, actor, 'document_annotation_thread_created', {
      documentKey: doc.key,
      threadId: id,
      annotationCommentId: comment.id,
    });
    return this.get(doc, id);
  }

  /** A reply bumps the thread's activity time and wakes the assignee. */
  async reply(
    actor: Actor,
    issue: IssueRecord,
    doc: DocumentRecord,
    threadId: string,
    body: string,
  ): Promise<AnnotationCommentResponseDto> {
    const t = await this.find(doc, threadId, true);
    const comment = await this.insertComment(actor, issue.companyId, t.id, body);
    await this.annotations.touchThread(issue.companyId, t.id);
    await this.activity.record({
      companyId: issue.companyId,
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
    issue: IssueRecord,
    doc: DocumentRecord,
    threadId: string,
    status: 'open' | 'resolved',
  ): Promise<AnnotationThreadResponseDto> {
    const t = await this.find(doc, threadId, true);
    if (t.status === status) return this.get(doc, t.id);
    const who = authorOf(actor);
    const resolved = status === 'resolved';
    await this.annotations.setThreadStatus(issue.companyId, t.id, status, resolved, {
      agentId: resolved ? who.agentId : null,
      userId: resolved ? who.userId : null,
    });
    await this.activity.record({
      companyId: issue.companyId,
      action: resolved ? 'issue.document_annotation_thread_resolved' : 'issue.document_annotation_thread_reopened',
      entityType: 'issue',
      entityId: issue.id,
      actor,
      details: { documentId: doc.id, key: doc.key, threadId: t.id, status },
    });
    return this.get(doc, t.id);
  }

  /** Every thread of the document is re-anchored against the new revision (active / shifted / orphaned). */
  async reanchorAll(doc: DocumentRecord, revision: RevisionRecord): Promise<void> {
    const threads = await this.annotations.selectorsForUpdate(doc.companyId, doc.id);
    for (const t of threads) {
      const r = reanchor(t.selector, revision.body);
      await this.annotations.reanchor(doc.companyId, t.id, r.state, r.selector, { id: revision.id, number: revision.revisionNumber });
    }
  }

  private async find(doc: DocumentRecord, threadId: string, lock = false): Promise<AnnotationThreadRecord> {
    const t = isUuid(threadId) ? await this.annotations.findThread(doc.companyId, doc.id, threadId, lock) : null;
    if (!t) throw notFound('Annotation thread');
    return t;
  }

  private async commentsOf(companyId: string, threadIds: string[]): Promise<Map<string, AnnotationCommentRecord[]>> {
    const out = new Map<string, AnnotationCommentRecord[]>(threadIds.map((id) => [id, []]));
    if (!threadIds.length) return out;
    const rows = await this.annotations.commentsOf(companyId, threadIds);
    for (const c of rows) out.get(c.threadId)?.push(c);
    return out;
  }

  private async insertComment(actor: Actor, companyId: string, threadId: string, body: string): Promise<AnnotationCommentRecord> {
    return this.annotations.insertComment(companyId, threadId, body, authorOf(actor));
  }
}
