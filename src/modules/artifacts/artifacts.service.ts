import { Injectable } from '@nestjs/common';
import { isoRequired } from '../../database/row-mapping';
import { attachmentPaths } from '../attachments/attachment.types';
import { artifactError } from './artifacts.errors';
import { ArtifactCursor, ArtifactFilter, ArtifactRecord, ArtifactsRepository } from './artifacts.repository';
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

function toArtifact(r: ArtifactRecord): ArtifactDto {
  const file = r.attachmentId ? attachmentPaths(r.attachmentId) : null;
  const documentPath = r.docKey ? `/api/issues/${r.issueId}/documents/${r.docKey}` : null;
  return {
    id: r.id,
    source: r.source,
    mediaKind: r.mediaKind,
    title: r.title,
    previewText: r.previewText,
    contentType: r.contentType,
    contentPath: file?.contentPath ?? null,
    openPath: file?.openPath ?? documentPath ?? r.url,
    downloadPath: file?.downloadPath ?? null,
    issue: { id: r.issueId, identifier: r.issueIdentifier, title: r.issueTitle },
    project: r.projectId ? { id: r.projectId, name: r.projectName ?? '' } : null,
    createdByAgent: r.agentId ? { id: r.agentId, name: r.agentName ?? '' } : null,
    updatedAt: isoRequired(r.updatedAt),
    href: documentPath ?? file?.contentPath ?? r.url ?? `/api/issues/${r.issueId}`,
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
    return { artifacts: page.map(toArtifact), nextCursor: more && last ? encodeCursor([last.sortUs, last.id]) : null };
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
      groups.map((g) => g.groupIssueId),
    );
    return groups.map((g) => ({
      sortUs: g.sortUs,
      dto: {
        id: `${groupBy}:${g.groupIssueId}`,
        groupBy,
        issue: { id: g.groupIssueId, identifier: g.identifier, title: g.title },
        title: g.title,
        count: g.count,
        mediaKinds: [...g.mediaKinds].sort(),
        previewArtifacts: previews.filter((p) => p.groupIssueId === g.groupIssueId).map(toArtifact),
        updatedAt: isoRequired(g.updatedAt),
        href: `/api/issues/${g.groupIssueId}`,
      },
    }));
  }
}
