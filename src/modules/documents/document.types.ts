import type { Actor } from '../../common/auth/actor';
import type { AnnotationCommentResponseDto, AnnotationThreadResponseDto } from './dto/annotation.dto';
import type { DocumentResponseDto, DocumentSummaryDto, RevisionResponseDto } from './dto/document.dto';
import type { AnchorSelector, AnchorState } from './anchoring';

/** Document keys: lowercase letters, digits, `_` and `-`. */
export const DOCUMENT_KEY_RE = /^[a-z0-9_-]{1,64}$/;
/** Issue document body limit (spec, Limits). */
export const MAX_DOCUMENT_BODY_BYTES = 512 * 1024;
export const PLAN_KEY = 'plan';

export const iso = (d: Date | string | null): string | null => (d ? new Date(d).toISOString() : null);

/** Who acted, as the (agent, user) column pair every authored row carries. */
export const authorOf = (actor: Actor): { agentId: string | null; userId: string | null; runId: string | null } => ({
  agentId: actor.kind === 'agent' ? actor.agentId : null,
  userId: actor.kind === 'board' ? actor.userId : null,
  runId: actor.kind === 'agent' ? (actor.runId ?? null) : null,
});

export interface DocumentRow {
  id: string;
  company_id: string;
  issue_id: string;
  key: string;
  title: string | null;
  format: string;
  latest_revision_id: string;
  latest_revision_number: number;
  locked_at: Date | null;
  locked_by_agent_id: string | null;
  locked_by_user_id: string | null;
  created_by_agent_id: string | null;
  created_by_user_id: string | null;
  updated_by_agent_id: string | null;
  updated_by_user_id: string | null;
  created_at: Date;
  updated_at: Date;
}

export const DOCUMENT_COLUMNS = `id, company_id, issue_id, key, title, format, latest_revision_id, latest_revision_number, locked_at,
  locked_by_agent_id, locked_by_user_id, created_by_agent_id, created_by_user_id, updated_by_agent_id, updated_by_user_id,
  created_at, updated_at`;

export interface RevisionRow {
  id: string;
  company_id: string;
  document_id: string;
  revision_number: number;
  title: string | null;
  format: string;
  body: string;
  change_summary: string | null;
  base_revision_id: string | null;
  restored_from_revision_id: string | null;
  created_by_agent_id: string | null;
  created_by_user_id: string | null;
  created_at: Date;
}

export const REVISION_COLUMNS = `id, company_id, document_id, revision_number, title, format, body, change_summary, base_revision_id,
  restored_from_revision_id, created_by_agent_id, created_by_user_id, created_at`;

export function toDocumentResponse(d: DocumentRow, latest: RevisionRow): DocumentResponseDto {
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
    createdAt: iso(d.created_at)!,
    updatedAt: iso(d.updated_at)!,
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
    updatedAt: iso(d.updated_at)!,
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
    createdAt: iso(r.created_at)!,
  };
}

export interface ThreadRow {
  id: string;
  company_id: string;
  issue_id: string;
  document_id: string;
  document_key: string;
  status: 'open' | 'resolved';
  anchor_state: AnchorState;
  base_revision_id: string;
  base_revision_number: number;
  anchor_revision_id: string;
  anchor_revision_number: number;
  original_selector: Record<string, unknown>;
  selector: AnchorSelector;
  created_by_agent_id: string | null;
  created_by_user_id: string | null;
  resolved_at: Date | null;
  resolved_by_agent_id: string | null;
  resolved_by_user_id: string | null;
  comment_count: number;
  last_activity_at: Date;
  created_at: Date;
  updated_at: Date;
}

/** Thread columns (alias t) with the document key and comment count. */
export const THREAD_SELECT = `SELECT t.id, t.company_id, t.issue_id, t.document_id, d.key AS document_key, t.status, t.anchor_state,
    t.base_revision_id, t.base_revision_number, t.anchor_revision_id, t.anchor_revision_number, t.original_selector, t.selector,
    t.created_by_agent_id, t.created_by_user_id, t.resolved_at, t.resolved_by_agent_id, t.resolved_by_user_id,
    (SELECT count(*)::int FROM document_annotation_comments c WHERE c.thread_id = t.id) AS comment_count,
    t.last_activity_at, t.created_at, t.updated_at
  FROM document_annotation_threads t JOIN issue_documents d ON d.id = t.document_id`;

export interface AnnotationCommentRow {
  id: string;
  thread_id: string;
  body: string;
  author_agent_id: string | null;
  author_user_id: string | null;
  created_at: Date;
}

export const ANNOTATION_COMMENT_COLUMNS = 'id, thread_id, body, author_agent_id, author_user_id, created_at';

export function toAnnotationCommentResponse(c: AnnotationCommentRow): AnnotationCommentResponseDto {
  return {
    id: c.id,
    threadId: c.thread_id,
    body: c.body,
    authorAgentId: c.author_agent_id,
    authorUserId: c.author_user_id,
    createdAt: iso(c.created_at)!,
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
    lastActivityAt: iso(t.last_activity_at)!,
    createdAt: iso(t.created_at)!,
    updatedAt: iso(t.updated_at)!,
    ...(comments ? { comments: comments.map(toAnnotationCommentResponse) } : {}),
  };
}
