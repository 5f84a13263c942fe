import { Injectable } from '@nestjs/common';
import type { Actor } from '../../common/auth/actor';
import { CompanyAccessService } from '../../common/auth/company-access.service';
import { notFound } from '../../common/errors/domain-error';
import { isUuid } from '../../common/http/uuid';
import { IssueResponseDto, IssueSummaryDto } from './dto/issue.dto';
import { IssuesRepository } from './issues.repository';
import { IssueSets, toIssueResponse, toIssueSummary } from './issue-view';
import { IssueRow } from './issue.types';

/** isUuid without type narrowing (refs are strings either way). */
const looksLikeUuid = (s: string): boolean => isUuid(s);

/** Issue rows by UUID or identifier, tenancy checks, and the label/blocker sets of a page of issues. */
@Injectable()
export class IssueStore {
  constructor(
    private readonly issues: IssuesRepository,
    private readonly access: CompanyAccessService,
  ) {}

  /** Which of these issues of the company are hidden (live events about them are not delivered). */
  async hiddenAmong(companyId: string, ids: string[]): Promise<Set<string>> {
    const uuids = ids.filter(looksLikeUuid);
    if (uuids.length === 0) return new Set();
    return new Set(await this.issues.hiddenAmong(companyId, uuids));
  }

  /** `{issueId}` is a UUID or an identifier such as `ABC-12` (case-insensitive). */
  async findByRef(ref: string, opts: { lock?: boolean; companyId?: string } = {}): Promise<IssueRow | null> {
    const byId = looksLikeUuid(ref);
    if (!byId && !/^[A-Za-z0-9]+-\d+$/.test(ref)) return null;
    const [column, value] = byId ? (['id', ref] as const) : (['identifier', ref.toUpperCase()] as const);
    if (opts.companyId) return this.issues.findBy(opts.companyId, column, value, !!opts.lock);
    return this.issues.findAnyCompany(column, value, !!opts.lock);
  }

  /** 404 for an unknown issue and for one of a company the caller cannot reach. */
  async load(actor: Actor, ref: string, opts: { lock?: boolean } = {}): Promise<IssueRow> {
    const row = await this.findByRef(ref, opts);
    if (!row) throw notFound('Issue');
    await this.access.assertAccessToKnownCompany(actor, row.company_id, 'Issue');
    return row;
  }

  /** Every issue of a company with its label names, oldest first (portability export). */
  async allOfCompany(
    companyId: string,
    opts: { includeRoutineExecutions?: boolean } = {},
  ): Promise<Array<IssueRow & { label_names: string[] }>> {
    return this.issues.allOfCompany(companyId, !!opts.includeRoutineExecutions);
  }

  /** Summaries of issues of the company by id, in the order of `ids`; ids of deleted issues are left out. */
  async summariesOf(companyId: string, ids: string[]): Promise<IssueSummaryDto[]> {
    if (!ids.length) return [];
    const rows = await this.issues.findManyOfCompany(companyId, ids);
    const byId = new Map(rows.map((r) => [r.id, r]));
    return ids.flatMap((id) => (byId.has(id) ? [toIssueSummary(byId.get(id)!)] : []));
  }

  /** Labels and blocker ids of a page of issues, in one query per company (a page is of one company). */
  async setsOf(rows: Array<Pick<IssueRow, 'id' | 'company_id'>>): Promise<Map<string, IssueSets>> {
    const byCompany = new Map<string, string[]>();
    for (const r of rows) {
      const ids = byCompany.get(r.company_id);
      if (ids) ids.push(r.id);
      else byCompany.set(r.company_id, [r.id]);
    }
    const sets = new Map<string, IssueSets>();
    for (const [companyId, ids] of byCompany) for (const [id, s] of await this.issues.setsOf(companyId, ids)) sets.set(id, s);
    return sets;
  }

  /** Response objects for rows, with their labels and blockers (two queries for the whole page). */
  async toResponses(rows: IssueRow[]): Promise<IssueResponseDto[]> {
    const sets = await this.setsOf(rows);
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
