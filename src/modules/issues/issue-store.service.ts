import { Injectable } from '@nestjs/common';
import type { Actor } from '../../common/auth/actor';
import { CompanyAccessService } from '../../common/auth/company-access.service';
import { notFound } from '../../common/errors/domain-error';
import { isUuid } from '../../common/http/uuid';

/** isUuid without type narrowing (refs are strings either way). */
const looksLikeUuid = (s: string): boolean => isUuid(s);
import { Db } from '../../database/db.service';
import { IssueResponseDto, IssueSummaryDto, LabelSummaryDto } from './dto/issue.dto';
import { ISSUE_COLUMNS, IssueRow } from './issue.types';

/** ISO 8601 or null for a timestamp column. */
export const iso = (d: Date | null) => (d ? new Date(d).toISOString() : null);

export function toIssueResponse(r: IssueRow, labels: LabelSummaryDto[], blockedByIssueIds: string[]): IssueResponseDto {
  return {
    id: r.id,
    companyId: r.company_id,
    identifier: r.identifier,
    issueNumber: r.issue_number,
    title: r.title,
    description: r.description,
    status: r.status,
    priority: r.priority,
    projectId: r.project_id,
    goalId: r.goal_id,
    parentId: r.parent_id,
    blockedByIssueIds,
    labelIds: labels.map((l) => l.id),
    labels,
    assigneeAgentId: r.assignee_agent_id,
    assigneeUserId: r.assignee_user_id,
    checkoutRunId: r.checkout_run_id,
    executionPolicy: r.execution_policy,
    executionWorkspaceId: r.execution_workspace_id,
    executionWorkspacePreference: r.execution_workspace_preference,
    executionWorkspaceSettings: r.execution_workspace_settings,
    inheritExecutionWorkspaceFromIssueId: r.inherit_execution_workspace_from_issue_id,
    hiddenAt: iso(r.hidden_at),
    originKind: r.origin_kind,
    originId: r.origin_id,
    createdByAgentId: r.created_by_agent_id,
    createdByUserId: r.created_by_user_id,
    startedAt: iso(r.started_at),
    completedAt: iso(r.completed_at),
    cancelledAt: iso(r.cancelled_at),
    createdAt: iso(r.created_at)!,
    updatedAt: iso(r.updated_at)!,
  };
}

export function toIssueSummary(r: IssueRow): IssueSummaryDto {
  return {
    id: r.id,
    identifier: r.identifier,
    title: r.title,
    status: r.status,
    priority: r.priority,
    assigneeAgentId: r.assignee_agent_id,
    projectId: r.project_id,
    goalId: r.goal_id,
    parentId: r.parent_id,
    updatedAt: iso(r.updated_at)!,
  };
}

export interface IssueSets {
  labels: LabelSummaryDto[];
  blockers: string[];
}

/** SQL select items `labels` (json) and `blockers` (uuid[]) for the issue whose id is `<alias>.id`. */
export function issueSetsSql(alias: string): string {
  return `(SELECT coalesce(json_agg(json_build_object('id', l.id, 'name', l.name, 'color', l.color) ORDER BY lower(l.name), l.id), '[]')
             FROM issue_labels il JOIN labels l ON l.id = il.label_id WHERE il.issue_id = ${alias}.id) AS labels,
          (SELECT coalesce(array_agg(r.issue_id ORDER BY r.created_at, r.issue_id), '{}')
             FROM issue_relations r WHERE r.related_issue_id = ${alias}.id AND r.type = 'blocks') AS blockers`;
}

/** Issue rows by UUID or identifier, tenancy checks, and the label/blocker sets of a page of issues. */
@Injectable()
export class IssueStore {
  constructor(
    private readonly db: Db,
    private readonly access: CompanyAccessService,
  ) {}

  /** Which of these issues of the company are hidden (live events about them are not delivered). */
  async hiddenAmong(companyId: string, ids: string[]): Promise<Set<string>> {
    const uuids = ids.filter(looksLikeUuid);
    if (uuids.length === 0) return new Set();
    const rows = (await this.db.dataSource.query(
      `SELECT id FROM issues WHERE company_id = $1 AND id = ANY($2::uuid[]) AND hidden_at IS NOT NULL`,
      [companyId, uuids],
    )) as Array<{ id: string }>;
    return new Set(rows.map((r) => r.id));
  }

  /** `{issueId}` is a UUID or an identifier such as `ABC-12` (case-insensitive). */
  async findByRef(ref: string, opts: { lock?: boolean; companyId?: string } = {}): Promise<IssueRow | null> {
    const byId = looksLikeUuid(ref);
    if (!byId && !/^[A-Za-z0-9]+-\d+$/.test(ref)) return null;
    const params: unknown[] = [byId ? ref : ref.toUpperCase()];
    let sql = `SELECT ${ISSUE_COLUMNS} FROM issues WHERE ${byId ? 'id' : 'identifier'} = $1`;
    if (opts.companyId) {
      params.push(opts.companyId);
      sql += ` AND company_id = $2`;
    }
    if (opts.lock) sql += ' FOR UPDATE';
    const [row] = await this.db.query<IssueRow>(sql, params);
    return row ?? null;
  }

  /** 404 for an unknown issue, 403 for an issue of a company the caller cannot reach. */
  async load(actor: Actor, ref: string, opts: { lock?: boolean } = {}): Promise<IssueRow> {
    const row = await this.findByRef(ref, opts);
    if (!row) throw notFound('Issue');
    await this.access.assertAccessToKnownCompany(actor, row.company_id);
    return row;
  }

  /** Every issue of a company with its label names, oldest first (portability export). */
  async allOfCompany(
    companyId: string,
    opts: { includeRoutineExecutions?: boolean } = {},
  ): Promise<Array<IssueRow & { label_names: string[] }>> {
    return this.db.query<IssueRow & { label_names: string[] }>(
      `SELECT ${ISSUE_COLUMNS.split(',')
        .map((c) => `i.${c.trim()}`)
        .join(', ')},
              array(SELECT l.name FROM issue_labels il JOIN labels l ON l.id = il.label_id WHERE il.issue_id = i.id ORDER BY lower(l.name)) AS label_names
         FROM issues i WHERE i.company_id = $1 AND i.hidden_at IS NULL ${opts.includeRoutineExecutions ? '' : `AND i.origin_kind <> 'routine_execution'`}
        ORDER BY i.issue_number`,
      [companyId],
    );
  }

  /** Summaries of issues of the company by id, in the order of `ids`; ids of deleted issues are left out. */
  async summariesOf(companyId: string, ids: string[]): Promise<IssueSummaryDto[]> {
    if (!ids.length) return [];
    const rows = await this.db.query<IssueRow>(`SELECT ${ISSUE_COLUMNS} FROM issues WHERE company_id = $1 AND id = ANY($2::uuid[])`, [
      companyId,
      ids,
    ]);
    const byId = new Map(rows.map((r) => [r.id, r]));
    return ids.flatMap((id) => (byId.has(id) ? [toIssueSummary(byId.get(id)!)] : []));
  }

  /** Labels and blocker ids of a page of issues, in one query. */
  async setsOf(issueIds: string[]): Promise<Map<string, IssueSets>> {
    if (!issueIds.length) return new Map();
    // one issue (every single-issue answer) has its own statement: Postgres plans `unnest` of an array
    // parameter for 100 elements, so a generic plan never won against one for a single id and the
    // statement was planned anew on every request
    const rows =
      issueIds.length === 1
        ? await this.db.query<IssueSets & { id: string }>(`SELECT x.id, ${issueSetsSql('x')} FROM (SELECT $1::uuid AS id) AS x`, issueIds)
        : await this.db.query<IssueSets & { id: string }>(`SELECT x.id, ${issueSetsSql('x')} FROM unnest($1::uuid[]) AS x(id)`, [issueIds]);
    return new Map(rows.map((r) => [r.id, r]));
  }

  /** Response objects for rows, with their labels and blockers (two queries for the whole page). */
  async toResponses(rows: IssueRow[]): Promise<IssueResponseDto[]> {
    const sets = await this.setsOf(rows.map((r) => r.id));
    return rows.map((r) => toIssueResponse(r, sets.get(r.id)?.labels ?? [], sets.get(r.id)?.blockers ?? []));
  }

  async toResponse(row: IssueRow): Promise<IssueResponseDto> {
    return (await this.toResponses([row]))[0];
  }

  /** A fresh issue without labels or blockers needs no further query. */
  async toCreatedResponse(row: IssueRow, dto: { labelIds?: string[]; blockedByIssueIds?: string[] }): Promise<IssueResponseDto> {
    if (dto.labelIds?.length || dto.blockedByIssueIds?.length) return this.toResponse(row);
    return toIssueResponse(row, [], []);
  }
}
