import { Injectable } from '@nestjs/common';
import { isoRequired } from '../../database/row-mapping';
import { attachmentPaths } from '../attachments/attachment.types';
import { artifactError } from './artifacts.errors';
import { ArtifactCursor, ArtifactFilter, ArtifactRow, ArtifactsRepository } from './artifacts.repository';
import { ArtifactDto, ArtifactGroupDto, ArtifactListResponseDto, ListArtifactsQueryDto } from './dto/artifact.dto';

const encodeCursor = (c: ArtifactCursor) => Buffer.from(JSON.stringify(c)).toString('base64url');

function decodeCursor(raw: string | undefined): ArtifactCursor | null {
  if (!raw) return null;
  try {
    const c = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8')) as unknown;
    if (Array.isArray(c) && c.length === 2 && /^\d{1,20}$/.test(String(c[0])) && typeof c[1] === 'string' && c[1].length <= 100)
      return [String(c[0]), c[1]];
  } catch {
    // fall through
  }
  throw artifactError('invalid_cursor', 'cursor is not a cursor returned by this list', { field: 'cursor' });
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
    updatedAt: isoRequired(r.updated_at),
    href: documentPath ?? file?.contentPath ?? r.url ?? `/api/issues/${r.issue_id}`,
  };
}

/** GET /companies/{companyId}/artifacts: a flat, keyset-paged list, or groups per task / parent task. */
@Injectable()
export class ArtifactsService {
  constructor(private readonly repo: ArtifactsRepository) {}

  async list(companyId: string, q: ListArtifactsQueryDto): Promise<ArtifactListResponseDto> {
    const limit = q.limit ?? 30;
    const cursor = decodeCursor(q.cursor);
    const groupBy = q.groupBy ?? 'none';
    const filter: ArtifactFilter = {
      companyId,
      groupBy,
      kind: q.kind && q.kind !== 'all' ? q.kind : null,
      projectId: q.projectId ?? null,
      pattern: q.q ? `%${escapeLike(q.q)}%` : null,
    };
    if (q.groupIssueId) {
      const page = await this.artifacts(filter, limit, cursor, q.groupIssueId);
      const [selectedGroup] = await this.groups(filter, 1, null, q.groupIssueId, groupBy === 'none' ? 'task' : groupBy);
      return { ...page, selectedGroup: selectedGroup?.dto ?? null };
    }
    if (groupBy === 'none') return this.artifacts(filter, limit, cursor);
    const groups = await this.groups(filter, limit + 1, cursor, undefined, groupBy);
    const more = groups.length > limit;
    const pageGroups = groups.slice(0, limit);
    const last = pageGroups[pageGroups.length - 1];
    return {
      artifacts: [],
      groups: pageGroups.map((g) => g.dto),
      nextCursor: more && last ? encodeCursor([last.sortUs, last.dto.issue.id]) : null,
    };
  }

  private async artifacts(
    filter: ArtifactFilter,
    limit: number,
    cursor: ArtifactCursor | null,
    groupIssueId?: string,
  ): Promise<ArtifactListResponseDto> {
    const rows = await this.repo.page(filter, limit + 1, cursor, groupIssueId ?? null);
    const more = rows.length > limit;
    const page = rows.slice(0, limit);
    const last = page[page.length - 1];
    return { artifacts: page.map(toArtifact), nextCursor: more && last ? encodeCursor([last.sort_us, last.id]) : null };
  }

  /** Groups newest first, each with its newest artifacts as previews. */
  private async groups(
    filter: ArtifactFilter,
    limit: number,
    cursor: ArtifactCursor | null,
    onlyIssueId: string | undefined,
    groupBy: string,
  ): Promise<Array<{ dto: ArtifactGroupDto; sortUs: string }>> {
    const grouped = { ...filter, groupBy };
    const groups = await this.repo.groups(grouped, limit, cursor, onlyIssueId ?? null);
    if (!groups.length) return [];
    const previews = await this.repo.previews(
      grouped,
      groups.map((g) => g.group_issue_id),
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
        updatedAt: isoRequired(g.updated_at),
        href: `/api/issues/${g.group_issue_id}`,
      },
    }));
  }
}
