import { isoRequired } from '../../database/row-mapping';
import type { AttachmentRecord } from './attachments.repository';
import type { AttachmentResponseDto } from './dto/attachment.dto';

export type { AttachmentRecord } from './attachments.repository';

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

export function toAttachmentResponse(a: AttachmentRecord): AttachmentResponseDto {
  return {
    id: a.id,
    companyId: a.companyId,
    issueId: a.issueId,
    issueCommentId: a.issueCommentId,
    assetId: a.assetId,
    contentType: a.contentType,
    byteSize: a.byteSize,
    sha256: a.sha256,
    originalFilename: a.originalFilename,
    createdByAgentId: a.createdByAgentId,
    createdByUserId: a.createdByUserId,
    createdAt: isoRequired(a.createdAt),
    updatedAt: isoRequired(a.updatedAt),
    ...attachmentPaths(a.id),
  };
}

/** Compact attachment list of an issue (heartbeat context). */
export function attachmentSummaries(rows: AttachmentRecord[]) {
  return rows.map((a) => ({
    id: a.id,
    originalFilename: a.originalFilename,
    contentType: effectiveContentType(a.contentType, a.originalFilename),
    byteSize: a.byteSize,
    issueCommentId: a.issueCommentId,
    contentPath: attachmentPaths(a.id).contentPath,
    createdAt: isoRequired(a.createdAt),
  }));
}
