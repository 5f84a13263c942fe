import type { Db } from '../../database/db.service';
import type { AttachmentResponseDto } from './dto/attachment.dto';

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

export interface AttachmentRow {
  id: string;
  company_id: string;
  issue_id: string;
  issue_comment_id: string | null;
  asset_id: string;
  content_type: string;
  byte_size: number;
  sha256: string;
  storage_key: string;
  original_filename: string | null;
  created_by_agent_id: string | null;
  created_by_user_id: string | null;
  created_at: Date;
  updated_at: Date;
}

/** Attachment columns (alias a) with its asset's (alias s). */
export const ATTACHMENT_SELECT = `SELECT a.id, a.company_id, a.issue_id, a.issue_comment_id, a.asset_id, s.content_type, s.byte_size, s.sha256,
    s.storage_key, s.original_filename, a.created_by_agent_id, a.created_by_user_id, a.created_at, a.updated_at
  FROM issue_attachments a JOIN assets s ON s.id = a.asset_id`;

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
    createdAt: new Date(a.created_at).toISOString(),
    updatedAt: new Date(a.updated_at).toISOString(),
    ...attachmentPaths(a.id),
  };
}

/** Compact attachment list of an issue (heartbeat context). */
export async function attachmentSummariesOf(db: Db, issueId: string) {
  const rows = await db.query<AttachmentRow>(`${ATTACHMENT_SELECT} WHERE a.issue_id = $1 ORDER BY a.created_at, a.id`, [issueId]);
  return rows.map((a) => ({
    id: a.id,
    originalFilename: a.original_filename,
    contentType: effectiveContentType(a.content_type, a.original_filename),
    byteSize: a.byte_size,
    issueCommentId: a.issue_comment_id,
    contentPath: attachmentPaths(a.id).contentPath,
    createdAt: new Date(a.created_at).toISOString(),
  }));
}
