import { isoRequired } from '../../database/row-mapping';
import type { AttachmentRow } from './attachments.repository';
import type { AttachmentResponseDto } from './dto/attachment.dto';

export type { AttachmentRow } from './attachments.repository';

/** Generic stored types for which the content route infers a video type from the file extension. */
export const GENERIC_CONTENT_TYPES = ['application/octet-stream', 'binary/octet-stream', 'application/x-binary'];

const VIDEO_BY_EXTENSION: Record<string, string> = {
  mp4: 'video/mp4',
  m4v: 'video/mp4',
  webm: 'video/webm',
  mov: 'video/quicktime',
  qt: 'video/quicktime',
  quicktime: 'video/quicktime',
};

const baseType = (contentType: string) => contentType.split(';')[0].trim().toLowerCase();

/** The type to serve: the stored one, or for a generic one the video type its extension names. */
export function effectiveContentType(contentType: string, filename: string | null): string {
  if (!GENERIC_CONTENT_TYPES.includes(baseType(contentType))) return contentType;
  const ext = /\.([a-z0-9]+)$/i.exec(filename ?? '')?.[1]?.toLowerCase();
  return (ext && VIDEO_BY_EXTENSION[ext]) || contentType;
}

/** Types a browser may render in place (images, PDF, audio, video, plain text); the rest are downloads. */
export function isInlineCapable(contentType: string): boolean {
  const t = baseType(contentType);
  return t.startsWith('image/') || t.startsWith('video/') || t.startsWith('audio/') || t === 'application/pdf' || t === 'text/plain';
}

export const attachmentPaths = (id: string) => {
  const contentPath = `/api/attachments/${id}/content`;
  return { contentPath, openPath: contentPath, downloadPath: `${contentPath}?download=1` };
};

export function toAttachmentResponse(a: AttachmentRow): AttachmentResponseDto {
  return {
    id: a.id,
    companyId: a.company_id,
    issueId: a.issue_id,
    issueCommentId: a.issue_comment_id,
    assetId: a.asset_id,
    contentType: a.content_type,
    byteSize: a.byte_size,
    sha256: a.sha256,
    originalFilename: a.original_filename,
    createdByAgentId: a.created_by_agent_id,
    createdByUserId: a.created_by_user_id,
    createdAt: isoRequired(a.created_at),
    updatedAt: isoRequired(a.updated_at),
    ...attachmentPaths(a.id),
  };
}

/** Compact attachment list of an issue (heartbeat context). */
export function attachmentSummaries(rows: AttachmentRow[]) {
  return rows.map((a) => ({
    id: a.id,
    originalFilename: a.original_filename,
    contentType: effectiveContentType(a.content_type, a.original_filename),
    byteSize: a.byte_size,
    issueCommentId: a.issue_comment_id,
    contentPath: attachmentPaths(a.id).contentPath,
    createdAt: isoRequired(a.created_at),
  }));
}
