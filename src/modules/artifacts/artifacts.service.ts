import { Injectable } from '@nestjs/common';
import { badRequest } from '../../common/errors/domain-error';
import { Db } from '../../database/db.service';
import { attachmentPaths, GENERIC_CONTENT_TYPES } from '../attachments/attachment.types';
import { ArtifactDto, ArtifactGroupDto, ArtifactListResponseDto, ListArtifactsQueryDto } from './dto/artifact.dto';

const PREVIEW_CHARS = 280;
const GROUP_PREVIEWS = 3;

/** The media kind of a stored file, in SQL so that `kind` filters and pages in the database. */
const mediaKindOfFile = (ct: string, name: string) => `CASE
    WHEN ${ct} LIKE 'image/%' THEN 'image'
    WHEN ${ct} LIKE 'video/%' OR (${ct} IN (${GENERIC_CONTENT_TYPES.map((t) => `'${t}'`).join(', ')})
      AND lower(coalesce(${name}, '')) ~ '\\.(mp4|m4v|webm|mov|qt|quicktime)$') THEN 'video'
    WHEN ${ct} LIKE 'text/%' OR ${ct} IN ('application/json', 'application/xml', 'application/yaml', 'application/x-yaml') THEN 'text'
    WHEN ${ct} IN ('application/pdf', 'application/msword', 'application/rtf', 'application/epub+zip')
      OR ${ct} LIKE 'application/vnd.openxmlformats-officedocument.%' OR ${ct} LIKE 'application/vnd.oasis.opendocument.%' THEN 'document'
    ELSE 'file' END`;

/** A URL-only work product: guessed from the path's extension, empty when unknown. */
const mediaKindOfUrl = (url: string) => `CASE
    WHEN ${url} ~* '\\.(png|jpe?g|gif|webp|svg|avif|bmp)([?#]|$)' THEN 'image'
    WHEN ${url} ~* '\\.(mp4|m4v|webm|mov)([?#]|$)' THEN 'video'
    WHEN ${url} ~* '\\.(txt|md|markdown|json|csv|log|ya?ml)([?#]|$)' THEN 'text'
    WHEN ${url} ~* '\\.(pdf|docx?|pptx?|xlsx?|odt)([?#]|$)' THEN 'document'
    ELSE '' END`;

/**
 * One row per artifact of the company: agent-authored documents, attachments, `artifact` work
 * products; joined with issue, project and agent; hidden issues left out. `sort_us` (update time in
 * microseconds) and `id` give a total order for keyset pages.
 */
const ARTIFACTS_CTE = `
  WITH src AS (
    SELECT 'document:' || d.id AS id, 'document' AS source, 'document' AS media_kind, coalesce(d.title, d.key) AS title,
           left(r.body, ${PREVIEW_CHARS}) AS preview_text, 'text/markdown' AS content_type, d.key AS doc_key, NULL::uuid AS attachment_id,
           NULL::text AS url, d.issue_id, coalesce(d.created_by_agent_id, d.updated_by_agent_id) AS agent_id, d.updated_at
      FROM issue_documents d JOIN issue_document_revisions r ON r.id = d.latest_revision_id
     WHERE d.company_id = $1 AND (d.created_by_agent_id IS NOT NULL OR d.updated_by_agent_id IS NOT NULL)
    UNION ALL
    SELECT 'attachment:' || a.id, 'attachment', ${mediaKindOfFile('s.content_type', 's.original_filename')},
           coalesce(s.original_filename, 'attachment'), NULL, s.content_type, NULL, a.id, NULL, a.issue_id, a.created_by_agent_id, a.updated_at
      FROM issue_attachments a JOIN assets s ON s.id = a.asset_id
     WHERE a.company_id = $1
    UNION ALL
    SELECT 'work_product:' || w.id, 'work_product',
           CASE WHEN s.id IS NOT NULL THEN ${mediaKindOfFile('s.content_type', 's.original_filename')} ELSE ${mediaKindOfUrl('w.url')} END,
           w.title, w.summary, s.content_type, NULL, w.attachment_id, w.url, w.issue_id, w.created_by_agent_id, w.updated_at
      FROM issue_work_products w LEFT JOIN issue_attachments a ON a.id = w.attachment_id LEFT JOIN assets s ON s.id = a.asset_id
     WHERE w.company_id = $1 AND w.type = 'artifact'
  ), art AS (
    SELECT src.*, (extract(epoch FROM src.updated_at) * 1000000)::bigint AS sort_us,
           i.identifier AS issue_identifier, i.title AS issue_title, i.project_id, p.name AS project_name, g.name AS agent_name,
           CASE WHEN $2 = 'parent_task' THEN coalesce(i.parent_id, i.id) ELSE i.id END AS group_issue_id
      FROM src JOIN issues i ON i.id = src.issue_id AND i.hidden_at IS NULL
      LEFT JOIN projects p ON p.id = i.project_id
      LEFT JOIN agents g ON g.id = src.agent_id
     WHERE ($3::text IS NULL OR src.media_kind = $3)
       AND ($4::uuid IS NULL OR i.project_id = $4)
       AND ($5::text IS NULL OR src.title ILIKE $5 OR src.preview_text ILIKE $5 OR i.title ILIKE $5 OR i.identifier ILIKE $5)
  )`;

interface ArtifactRow {
  id: string;
  source: ArtifactDto['source'];
  media_kind: string;
  title: string;
  preview_text: string | null;
  content_type: string | null;
  doc_key: string | null;
  attachment_id: string | null;
  url: string | null;
  issue_id: string;
  agent_id: string | null;
  updated_at: Date;
  sort_us: string;
  issue_identifier: string;
  issue_title: string;
  project_id: string | null;
  project_name: string | null;
  agent_name: string | null;
  group_issue_id: string;
}

interface GroupRow {
  group_issue_id: string;
  count: number;
  media_kinds: string[];
  updated_at: Date;
  sort_us: string;
  identifier: string;
  title: string;
}

type Cursor = [sortUs: string, id: string];

const encodeCursor = (c: Cursor) => Buffer.from(JSON.stringify(c)).toString('base64url');

function decodeCursor(raw: string | undefined): Cursor | null {
  if (!raw) return null;
  try {
    const c = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8')) as unknown;
    if (Array.isArray(c) && c.length === 2 && /^\d{1,20}$/.test(String(c[0])) && typeof c[1] === 'string' && c[1].length <= 100)
      return [String(c[0]), c[1]];
  } catch {
    // fall through
  }
  throw badRequest('cursor is not a cursor returned by this list', { field: 'cursor' }, 'invalid_cursor');
}

const escapeLike = (s: string) => s.replace(/[\\%_]/g, (ch) => `\\${ch}`);

function toArtifact(r: ArtifactRow): ArtifactDto {
  const file = r.attachment_id ? attachmentPaths(r.attachment_id) : null;
  const documentPath = r.doc_key ? `/api/issues/${r.issue_id}/documents/${r.doc_key}` : null;
  return {
    id: r.id,
    source: r.source,
    mediaKind: r.media_kind,
    title: r.title,
    previewText: r.preview_text,
    contentType: r.content_type,
    contentPath: file?.contentPath ?? null,
    openPath: file?.openPath ?? documentPath ?? r.url,
    downloadPath: file?.downloadPath ?? null,
    issue: { id: r.issue_id, identifier: r.issue_identifier, title: r.issue_title },
    project: r.project_id ? { id: r.project_id, name: r.project_name ?? '' } : null,
    createdByAgent: r.agent_id ? { id: r.agent_id, name: r.agent_name ?? '' } : null,
    updatedAt: new Date(r.updated_at).toISOString(),
    href: documentPath ?? file?.contentPath ?? r.url ?? `/api/issues/${r.issue_id}`,
  };
}

/** GET /companies/{companyId}/artifacts: a flat, keyset-paged list, or groups per task / parent task. */
@Injectable()
export class ArtifactsService {
  constructor(private readonly db: Db) {}

  async list(companyId: string, q: ListArtifactsQueryDto): Promise<ArtifactListResponseDto> {
    const limit = q.limit ?? 30;
    const cursor = decodeCursor(q.cursor);
    const groupBy = q.groupBy ?? 'none';
    const base = [companyId, groupBy, q.kind && q.kind !== 'all' ? q.kind : null, q.projectId ?? null, q.q ? `%${escapeLike(q.q)}%` : null];
    if (q.groupIssueId) {
      const page = await this.artifacts(base, limit, cursor, q.groupIssueId);
      const [selectedGroup] = await this.groups(base, 1, null, q.groupIssueId, groupBy === 'none' ? 'task' : groupBy);
      return { ...page, selectedGroup: selectedGroup?.dto ?? null };
    }
    if (groupBy === 'none') return this.artifacts(base, limit, cursor);
    const groups = await this.groups(base, limit + 1, cursor, undefined, groupBy);
    const more = groups.length > limit;
    const pageGroups = groups.slice(0, limit);
    const last = pageGroups[pageGroups.length - 1];
    return {
      artifacts: [],
      groups: pageGroups.map((g) => g.dto),
      nextCursor: more && last ? encodeCursor([last.sortUs, last.dto.issue.id]) : null,
    };
  }

  private async artifacts(base: unknown[], limit: number, cursor: Cursor | null, groupIssueId?: string): Promise<ArtifactListResponseDto> {
    const params = [...base, limit + 1, cursor?.[0] ?? null, cursor?.[1] ?? null, groupIssueId ?? null];
    const rows = await this.db.query<ArtifactRow>(
      `${ARTIFACTS_CTE}
       SELECT * FROM art
        WHERE ($7::bigint IS NULL OR (sort_us, id) < ($7::bigint, $8::text))
          AND ($9::uuid IS NULL OR group_issue_id = $9)
        ORDER BY sort_us DESC, id DESC LIMIT $6`,
      params,
    );
    const more = rows.length > limit;
    const page = rows.slice(0, limit);
    const last = page[page.length - 1];
    return { artifacts: page.map(toArtifact), nextCursor: more && last ? encodeCursor([last.sort_us, last.id]) : null };
  }

  /** Groups newest first, each with its newest artifacts as previews. */
  private async groups(
    base: unknown[],
    limit: number,
    cursor: Cursor | null,
    onlyIssueId: string | undefined,
    groupBy: string,
  ): Promise<Array<{ dto: ArtifactGroupDto; sortUs: string }>> {
    const params = [...base.slice(0, 1), groupBy, ...base.slice(2), limit, cursor?.[0] ?? null, cursor?.[1] ?? null, onlyIssueId ?? null];
    const groups = await this.db.query<GroupRow>(
      `${ARTIFACTS_CTE}, grp AS (
         SELECT group_issue_id, count(*)::int AS count, array_agg(DISTINCT media_kind) AS media_kinds,
                max(updated_at) AS updated_at, max(sort_us) AS sort_us
           FROM art WHERE ($9::uuid IS NULL OR group_issue_id = $9) GROUP BY group_issue_id)
       SELECT grp.*, i.identifier, i.title FROM grp JOIN issues i ON i.id = grp.group_issue_id
        WHERE ($7::bigint IS NULL OR (grp.sort_us, grp.group_issue_id::text) < ($7::bigint, $8::text))
        ORDER BY grp.sort_us DESC, grp.group_issue_id::text DESC LIMIT $6`,
      params,
    );
    if (!groups.length) return [];
    const previews = await this.db.query<ArtifactRow & { rn: number }>(
      `${ARTIFACTS_CTE}, ranked AS (
         SELECT art.*, row_number() OVER (PARTITION BY group_issue_id ORDER BY sort_us DESC, id DESC) AS rn
           FROM art WHERE group_issue_id = ANY($6::uuid[]))
       SELECT * FROM ranked WHERE rn <= ${GROUP_PREVIEWS} ORDER BY sort_us DESC, id DESC`,
      [...base.slice(0, 1), groupBy, ...base.slice(2), groups.map((g) => g.group_issue_id)],
    );
    return groups.map((g) => ({
      sortUs: g.sort_us,
      dto: {
        id: `${groupBy}:${g.group_issue_id}`,
        groupBy,
        issue: { id: g.group_issue_id, identifier: g.identifier, title: g.title },
        title: g.title,
        count: g.count,
        mediaKinds: [...g.media_kinds].sort(),
        previewArtifacts: previews.filter((p) => p.group_issue_id === g.group_issue_id).map(toArtifact),
        updatedAt: new Date(g.updated_at).toISOString(),
        href: `/api/issues/${g.group_issue_id}`,
      },
    }));
  }
}
