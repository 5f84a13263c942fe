import { Injectable } from '@nestjs/common';
import { CompanyScopedRepository } from '../../database/company-scoped.repository';
import { Db } from '../../database/db.service';
import { recordColumns } from '../../database/row-mapping';
import { GENERIC_CONTENT_TYPES } from '../attachments/attachment.types';
import type { ArtifactDto } from './dto/artifact.dto';

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

/** An artifact row of `art` as its record. */
const ARTIFACT_FIELDS = recordColumns(`id, source, media_kind, title, preview_text, content_type, doc_key, attachment_id, url, issue_id,
  agent_id, updated_at, sort_us, issue_identifier, issue_title, project_id, project_name, agent_name, group_issue_id`);

export interface ArtifactRecord {
  id: string;
  source: ArtifactDto['source'];
  mediaKind: string;
  title: string;
  previewText: string | null;
  contentType: string | null;
  docKey: string | null;
  attachmentId: string | null;
  url: string | null;
  issueId: string;
  agentId: string | null;
  updatedAt: Date;
  sortUs: string;
  issueIdentifier: string;
  issueTitle: string;
  projectId: string | null;
  projectName: string | null;
  agentName: string | null;
  groupIssueId: string;
}

export interface ArtifactGroupRecord {
  groupIssueId: string;
  count: number;
  mediaKinds: string[];
  updatedAt: Date;
  sortUs: string;
  identifier: string;
  title: string;
}

/** The filters of one artifacts page (`$1`…`$5` of ARTIFACTS_CTE). */
export interface ArtifactFilter {
  companyId: string;
  groupBy: string;
  kind: string | null;
  projectId: string | null;
  /** ILIKE pattern, already escaped */
  pattern: string | null;
}

/** A keyset position: update time in microseconds, then id. */
export type ArtifactCursor = [sortUs: string, id: string];

/**
 * The company artifacts view. It reads across domains for speed (documents, attachments with their
 * assets, work products, issues, projects, agents): the artifacts page is this module's, so the
 * read lives here.
 */
@Injectable()
export class ArtifactsRepository extends CompanyScopedRepository {
  constructor(db: Db) {
    super(db);
  }

  /** Up to `take` artifacts after `cursor`, newest first; only those of one group when `groupIssueId` is set. */
  page(f: ArtifactFilter, take: number, cursor: ArtifactCursor | null, groupIssueId: string | null): Promise<ArtifactRecord[]> {
    return this.rows<ArtifactRecord>(
      f.companyId,
      `${ARTIFACTS_CTE}
       SELECT ${ARTIFACT_FIELDS} FROM art
        WHERE ($7::bigint IS NULL OR (sort_us, id) < ($7::bigint, $8::text))
          AND ($9::uuid IS NULL OR group_issue_id = $9)
        ORDER BY sort_us DESC, id DESC LIMIT $6`,
      [f.groupBy, f.kind, f.projectId, f.pattern, take, cursor?.[0] ?? null, cursor?.[1] ?? null, groupIssueId],
    );
  }

  /** Up to `take` groups after `cursor`, newest first; only one when `onlyIssueId` is set. */
  groups(f: ArtifactFilter, take: number, cursor: ArtifactCursor | null, onlyIssueId: string | null): Promise<ArtifactGroupRecord[]> {
    return this.rows<ArtifactGroupRecord>(
      f.companyId,
      `${ARTIFACTS_CTE}, grp AS (
         SELECT group_issue_id, count(*)::int AS count, array_agg(DISTINCT media_kind) AS media_kinds,
                max(updated_at) AS updated_at, max(sort_us) AS sort_us
           FROM art WHERE ($9::uuid IS NULL OR group_issue_id = $9) GROUP BY group_issue_id)
       SELECT ${recordColumns('group_issue_id, count, media_kinds, updated_at, sort_us', 'grp')}, i.identifier, i.title FROM grp JOIN issues i ON i.id = grp.group_issue_id
        WHERE ($7::bigint IS NULL OR (grp.sort_us, grp.group_issue_id::text) < ($7::bigint, $8::text))
        ORDER BY grp.sort_us DESC, grp.group_issue_id::text DESC LIMIT $6`,
      [f.groupBy, f.kind, f.projectId, f.pattern, take, cursor?.[0] ?? null, cursor?.[1] ?? null, onlyIssueId],
    );
  }

  /** The newest artifacts of each of the groups (previews), newest first. */
  previews(f: ArtifactFilter, groupIssueIds: string[]): Promise<Array<ArtifactRecord & { rn: number }>> {
    return this.rows<ArtifactRecord & { rn: number }>(
      f.companyId,
      `${ARTIFACTS_CTE}, ranked AS (
         SELECT art.*, row_number() OVER (PARTITION BY group_issue_id ORDER BY sort_us DESC, id DESC) AS rn
           FROM art WHERE group_issue_id = ANY($6::uuid[]))
       SELECT ${ARTIFACT_FIELDS}, rn FROM ranked WHERE rn <= ${GROUP_PREVIEWS} ORDER BY sort_us DESC, id DESC`,
      [f.groupBy, f.kind, f.projectId, f.pattern, groupIssueIds],
    );
  }
}
