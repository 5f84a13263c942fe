import { Injectable } from '@nestjs/common';
import { notFound } from '../../common/errors/domain-error';
import { isUuid } from '../../common/http/uuid';
import { IssueResponseDto, IssueSummaryDto } from './dto/issue.dto';
import { IssuesRepository } from './issues.repository';
import { IssueSets, toIssueResponse, toIssueSummary } from './issue-view';
import { IssueRecord } from './issue.types';

/** isUuid without type narrowing (refs are strings either way). */
const looksLikeUuid = (s: string): boolean => isUuid(s);

/** Issue records of a company by UUID or identifier, and the label/blocker sets of a page of issues. */
@Injectable()
export class IssueStore {
  constructor(private readonly issues: IssuesRepository) {}

  /** Which of these issues of the company are hidden (live events about them are not delivered). */
  async hiddenAmong(companyId: string, ids: string[]): Promise<Set<string>> {
    const uuids = ids.filter(looksLikeUuid);
    if (uuids.length === 0) return new Set();
    return new Set(await this.issues.hiddenAmong(companyId, uuids));
  }

  /** The company's issue named by `ref`: a UUID or an identifier such as `ABC-12` (case-insensitive). */
  async findByRef(companyId: string, ref: string, opts: { lock?: boolean } = {}): Promise<IssueRecord | null> {
    const byId = looksLikeUuid(ref);
    if (!byId && !/^[A-Za-z0-9]+-\d+$/.test(ref)) return null;
    const [column, value] = byId ? (['id', ref] as const) : (['identifier', ref.toUpperCase()] as const);
    return this.issues.findBy(companyId, column, value, !!opts.lock);
  }

  /**
   * The issue `{issueId}` of a route names, in the route's company (`@RouteCompany()`: resolved from
   * the UUID or identifier and checked by the guard, which answers an unknown issue and another
   * company's with the same 404; undefined when the path holds neither form): 404 when not found.
   */
  async load(routeCompanyId: string | undefined, ref: string, opts: { lock?: boolean } = {}): Promise<IssueRecord> {
    const row = routeCompanyId ? await this.findByRef(routeCompanyId, ref, opts) : null;
    if (!row) throw notFound('Issue');
    return row;
  }

  /** Every issue of a company with its label names, oldest first (portability export). */
  async allOfCompany(
    companyId: string,
    opts: { includeRoutineExecutions?: boolean } = {},
  ): Promise<Array<IssueRecord & { labelNames: string[] }>> {
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
  async setsOf(rows: Array<Pick<IssueRecord, 'id' | 'companyId'>>): Promise<Map<string, IssueSets>> {
    const byCompany = new Map<string, string[]>();
    for (const r of rows) {
      const ids = byCompany.get(r.companyId);
      if (ids) ids.push(r.id);
      else byCompany.set(r.companyId, [r.id]);
    }
    const sets = new Map<string, IssueSets>();
    for (const [companyId, ids] of byCompany) for (const [id, s] of await this.issues.setsOf(companyId, ids)) sets.set(id, s);
    return sets;
  }

  /** Response objects for records, with their labels and blockers (two queries for the whole page). */
  async toResponses(rows: IssueRecord[]): Promise<IssueResponseDto[]> {
    const sets = await this.setsOf(rows);
    return rows.map((r) => toIssueResponse(r, sets.get(r.id)?.labels ?? [], sets.get(r.id)?.blockers ?? []));
  }

  async toResponse(row: IssueRecord): Promise<IssueResponseDto> {
    return (await this.toResponses([row]))[0];
  }

  /** A fresh issue without labels or blockers needs no further query. */
  async toCreatedResponse(row: IssueRecord, dto: { labelIds?: string[]; blockedByIssueIds?: string[] }): Promise<IssueResponseDto> {
    if (dto.labelIds?.length || dto.blockedByIssueIds?.length) return this.toResponse(row);
    return toIssueResponse(row, [], []);
  }
}
