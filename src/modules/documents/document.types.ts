import type { Actor } from '../../common/auth/actor';
import { iso, isoRequired } from '../../database/row-mapping';
import type { AnnotationCommentRow, ThreadRow } from './annotations.repository';
import type { Author, DocumentRow, RevisionRow } from './documents.repository';
import type { AnnotationCommentResponseDto, AnnotationThreadResponseDto } from './dto/annotation.dto';
import type { DocumentResponseDto, DocumentSummaryDto, RevisionResponseDto } from './dto/document.dto';

export type { AnnotationCommentRow, ThreadRow } from './annotations.repository';
export type { DocumentRow, RevisionRow } from './documents.repository';

/** Document keys: lowercase letters, digits, `_` and `-`. */
export const DOCUMENT_KEY_RE = /^[a-z0-9_-]{1,64}$/;
/** Issue document body limit (spec, Limits). */
export const MAX_DOCUMENT_BODY_BYTES = 512 * 1024;
export const PLAN_KEY = 'plan';

/** Who acted, as the (agent, user) column pair every authored row carries. */
export const authorOf = (actor: Actor): Author => ({
  agentId: actor.kind === 'agent' ? actor.agentId : null,
  userId: actor.kind === 'board' ? actor.userId : null,
  runId: actor.kind === 'agent' ? (actor.runId ?? null) : null,
});

export function toDocumentResponse(d: DocumentRow, latest: Pick<RevisionRow, 'body' | 'change_summary'>): DocumentResponseDto {
  return {
    id: d.id,
    companyId: d.company_id,
    issueId: d.issue_id,
    key: d.key,
    title: d.title,
    format: d.format,
    body: latest.body,
    changeSummary: latest.change_summary,
    latestRevisionId: d.latest_revision_id,
    latestRevisionNumber: d.latest_revision_number,
    lockedAt: iso(d.locked_at),
    lockedByAgentId: d.locked_by_agent_id,
    lockedByUserId: d.locked_by_user_id,
    createdByAgentId: d.created_by_agent_id,
    createdByUserId: d.created_by_user_id,
    updatedByAgentId: d.updated_by_agent_id,
    updatedByUserId: d.updated_by_user_id,
    createdAt: isoRequired(d.created_at),
    updatedAt: isoRequired(d.updated_at),
  };
}

export function toDocumentSummary(d: DocumentRow): DocumentSummaryDto {
  return {
    id: d.id,
    key: d.key,
    title: d.title,
    format: d.format,
    latestRevisionId: d.latest_revision_id,
    latestRevisionNumber: d.latest_revision_number,
    lockedAt: iso(d.locked_at),
    updatedAt: isoRequired(d.updated_at),
  };
}

export function toRevisionResponse(r: RevisionRow, d: Pick<DocumentRow, 'issue_id' | 'key'>): RevisionResponseDto {
  return {
    id: r.id,
    documentId: r.document_id,
    issueId: d.issue_id,
    key: d.key,
    revisionNumber: r.revision_number,
    title: r.title,
    format: r.format,
    body: r.body,
    changeSummary: r.change_summary,
    baseRevisionId: r.base_revision_id,
    restoredFromRevisionId: r.restored_from_revision_id,
    createdByAgentId: r.created_by_agent_id,
    createdByUserId: r.created_by_user_id,
    createdAt: isoRequired(r.created_at),
  };
}

export function toAnnotationCommentResponse(c: AnnotationCommentRow): AnnotationCommentResponseDto {
  return {
    id: c.id,
    threadId: c.thread_id,
    body: c.body,
    authorAgentId: c.author_agent_id,
    authorUserId: c.author_user_id,
    createdAt: isoRequired(c.created_at),
  };
}

export function toThreadResponse(t: ThreadRow, comments?: AnnotationCommentRow[]): AnnotationThreadResponseDto {
  return {
    id: t.id,
    companyId: t.company_id,
    issueId: t.issue_id,
    documentId: t.document_id,
    documentKey: t.document_key,
    status: t.status,
    anchorState: t.anchor_state,
    baseRevisionId: t.base_revision_id,
    baseRevisionNumber: t.base_revision_number,
    anchorRevisionId: t.anchor_revision_id,
    anchorRevisionNumber: t.anchor_revision_number,
    selector: t.selector as unknown as Record<string, unknown>,
    originalSelector: t.original_selector,
    createdByAgentId: t.created_by_agent_id,
    createdByUserId: t.created_by_user_id,
    resolvedAt: iso(t.resolved_at),
    resolvedByAgentId: t.resolved_by_agent_id,
    resolvedByUserId: t.resolved_by_user_id,
    commentCount: t.comment_count,
    lastActivityAt: isoRequired(t.last_activity_at),
    createdAt: isoRequired(t.created_at),
    updatedAt: isoRequired(t.updated_at),
    ...(comments ? { comments: comments.map(toAnnotationCommentResponse) } : {}),
  };
}
