import type { Actor } from '../../common/auth/actor';
import { iso, isoRequired } from '../../database/row-mapping';
import type { AnnotationCommentRecord, AnnotationThreadRecord } from './annotations.repository';
import type { Author, DocumentRecord, RevisionRecord } from './documents.repository';
import type { AnnotationCommentResponseDto, AnnotationThreadResponseDto } from './dto/annotation.dto';
import type { DocumentResponseDto, DocumentSummaryDto, RevisionResponseDto } from './dto/document.dto';

export type { AnnotationCommentRecord, AnnotationThreadRecord } from './annotations.repository';
export type { DocumentRecord, RevisionRecord } from './documents.repository';

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

export function toDocumentResponse(d: DocumentRecord, latest: Pick<RevisionRecord, 'body' | 'changeSummary'>): DocumentResponseDto {
  return {
    id: d.id,
    companyId: d.companyId,
    issueId: d.issueId,
    key: d.key,
    title: d.title,
    format: d.format,
    body: latest.body,
    changeSummary: latest.changeSummary,
    latestRevisionId: d.latestRevisionId,
    latestRevisionNumber: d.latestRevisionNumber,
    lockedAt: iso(d.lockedAt),
    lockedByAgentId: d.lockedByAgentId,
    lockedByUserId: d.lockedByUserId,
    createdByAgentId: d.createdByAgentId,
    createdByUserId: d.createdByUserId,
    updatedByAgentId: d.updatedByAgentId,
    updatedByUserId: d.updatedByUserId,
    createdAt: isoRequired(d.createdAt),
    updatedAt: isoRequired(d.updatedAt),
  };
}

export function toDocumentSummary(d: DocumentRecord): DocumentSummaryDto {
  return {
    id: d.id,
    key: d.key,
    title: d.title,
    format: d.format,
    latestRevisionId: d.latestRevisionId,
    latestRevisionNumber: d.latestRevisionNumber,
    lockedAt: iso(d.lockedAt),
    updatedAt: isoRequired(d.updatedAt),
  };
}

export function toRevisionResponse(r: RevisionRecord, d: Pick<DocumentRecord, 'issueId' | 'key'>): RevisionResponseDto {
  return {
    id: r.id,
    documentId: r.documentId,
    issueId: d.issueId,
    key: d.key,
    revisionNumber: r.revisionNumber,
    title: r.title,
    format: r.format,
    body: r.body,
    changeSummary: r.changeSummary,
    baseRevisionId: r.baseRevisionId,
    restoredFromRevisionId: r.restoredFromRevisionId,
    createdByAgentId: r.createdByAgentId,
    createdByUserId: r.createdByUserId,
    createdAt: isoRequired(r.createdAt),
  };
}

export function toAnnotationCommentResponse(c: AnnotationCommentRecord): AnnotationCommentResponseDto {
  return {
    id: c.id,
    threadId: c.threadId,
    body: c.body,
    authorAgentId: c.authorAgentId,
    authorUserId: c.authorUserId,
    createdAt: isoRequired(c.createdAt),
  };
}

export function toThreadResponse(t: AnnotationThreadRecord, comments?: AnnotationCommentRecord[]): AnnotationThreadResponseDto {
  return {
    id: t.id,
    companyId: t.companyId,
    issueId: t.issueId,
    documentId: t.documentId,
    documentKey: t.documentKey,
    status: t.status,
    anchorState: t.anchorState,
    baseRevisionId: t.baseRevisionId,
    baseRevisionNumber: t.baseRevisionNumber,
    anchorRevisionId: t.anchorRevisionId,
    anchorRevisionNumber: t.anchorRevisionNumber,
    selector: t.selector as unknown as Record<string, unknown>,
    originalSelector: t.originalSelector,
    createdByAgentId: t.createdByAgentId,
    createdByUserId: t.createdByUserId,
    resolvedAt: iso(t.resolvedAt),
    resolvedByAgentId: t.resolvedByAgentId,
    resolvedByUserId: t.resolvedByUserId,
    commentCount: t.commentCount,
    lastActivityAt: isoRequired(t.lastActivityAt),
    createdAt: isoRequired(t.createdAt),
    updatedAt: isoRequired(t.updatedAt),
    ...(comments ? { comments: comments.map(toAnnotationCommentResponse) } : {}),
  };
}
