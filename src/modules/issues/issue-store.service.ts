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

const iso = (d: Date | null) => (d ? new Date(d).toISOString() : null);

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

/** Issue rows by UUID or identifier, tenancy checks, and the label/blocker sets of a page of issues. */
@Injectable()
export class IssueStore {
  constructor(
    private readonly db: Db,
    private readonly access: CompanyAccessService,
  ) {}

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

  async labelsOf(issueIds: string[]): Promise<Map<string, LabelSummaryDto[]>> {
    const out = new Map<string, LabelSummaryDto[]>(issueIds.map((id) => [id, []]));
    if (!issueIds.length) return out;
    const rows = await this.db.query<{ issue_id: string; id: string; name: string; color: string | null }>(
      `SELECT il.issue_id, l.id, l.name, l.color FROM issue_labels il JOIN labels l ON l.id = il.label_id
        WHERE il.issue_id = ANY($1::uuid[]) ORDER BY lower(l.name)`,
      [issueIds],
    );
    for (const r of rows) out.get(r.issue_id)?.push({ id: r.id, name: r.name, color: r.color });
    return out;
  }

  async blockerIdsOf(issueIds: string[]): Promise<Map<string, string[]>> {
    const out = new Map<string, string[]>(issueIds.map((id) => [id, []]));
    if (!issueIds.length) return out;
    const rows = await this.db.query<{ blocked: string; blocker: string }>(
      `SELECT related_issue_id AS blocked, issue_id AS blocker FROM issue_relations
        WHERE related_issue_id = ANY($1::uuid[]) AND type = 'blocks' ORDER BY created_at, issue_id`,
      [issueIds],
    );
    for (const r of rows) out.get(r.blocked)?.push(r.blocker);
    return out;
  }

  /** Response objects for rows, with their labels and blockers (two queries for the whole page). */
  async toResponses(rows: IssueRow[]): Promise<IssueResponseDto[]> {
    const ids = rows.map((r) => r.id);
    const [labels, blockers] = await Promise.all([this.labelsOf(ids), this.blockerIdsOf(ids)]);
    return rows.map((r) => toIssueResponse(r, labels.get(r.id) ?? [], blockers.get(r.id) ?? []));
  }

  async toResponse(row: IssueRow): Promise<IssueResponseDto> {
    return (await this.toResponses([row]))[0];
  }
}
