import { Injectable } from '@nestjs/common';
import type { Actor } from '../../common/auth/actor';
import { badRequest, forbidden } from '../../common/errors/domain-error';
import { isUuid } from '../../common/http/uuid';
import { issueError } from './issues.errors';
import { IssueResponseDto, ListIssuesQueryDto } from './dto/issue.dto';
import { IssueListFilter, IssueListRepository, PageRecord } from './issue-list.repository';
import { toIssueResponse } from './issue-view';
import { ISSUE_STATUSES } from './issue.types';

export const DEFAULT_LIST_LIMIT = 500;
export const MAX_LIST_LIMIT = 1000;

/** a timestamptz as Postgres prints it, e.g. `2026-01-02 03:04:05.123456+00` */
const TIMESTAMP_TEXT = /^\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}(\.\d{1,6})?([+-]\d{2}(:?\d{2})?|Z)?$/;

/** Largest offset a search cursor may carry (a Postgres integer). */
const MAX_POSITION = 2_147_483_647;

const ME_FILTERS = ['assigneeUserId', 'touchedByUserId', 'inboxArchivedByUserId', 'unreadForUserId'] as const;

interface Cursor {
  /** keyset position in the priority order: priority rank, createdAt (full precision, as text), id */
  p?: number;
  c?: string;
  i?: string;
  /** best-match position (q): match tier, and offset within it */
  t?: number;
  o?: number;
}

export interface IssuePage {
  items: IssueResponseDto[];
  nextCursor: string | null;
}

/**
 * GET /companies/{companyId}/issues. Without `q`: priority order (critical first, then newest),
 * paged by keyset on (priority_rank, created_at, id), an index range scan on issues_list_idx at any
 * depth. With `q`: best match first, by match tiers (see searchPage), each in the same priority order.
 */
@Injectable()
export class IssueListService {
  constructor(private readonly repo: IssueListRepository) {}

  async list(actor: Actor, companyId: string, q: ListIssuesQueryDto): Promise<IssuePage> {
    const users = this.resolveMe(actor, q);
    let statuses: string[] | undefined;
    if (q.status !== undefined) {
      statuses = q.status
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean);
      const bad = statuses.filter((s) => !(ISSUE_STATUSES as readonly string[]).includes(s));
      if (!statuses.length || bad.length)
        throw badRequest(`status: unknown value(s) ${bad.join(', ')}`, { field: 'status' }, 'validation_failed');
    }
    const filter: IssueListFilter = {
      statuses,
      assigneeAgentId: q.assigneeAgentId,
      participantAgentId: q.participantAgentId,
      ...users,
      projectId: q.projectId,
      executionWorkspaceId: q.executionWorkspaceId,
      parentId: q.parentId,
      labelId: q.labelId,
      originKind: q.originKind,
      originId: q.originId,
      includeRoutineExecutions: q.includeRoutineExecutions === 'true',
    };

    const limit = Math.min(q.limit ?? DEFAULT_LIST_LIMIT, MAX_LIST_LIMIT);
    const cursor = decodeCursor(q.cursor);
    const search = q.q?.trim();
    if (search) return this.searchPage(companyId, filter, search, limit, cursor);

    const rows = await this.repo.page(companyId, filter, limit, cursor.i ? { p: cursor.p, c: cursor.c, i: cursor.i } : undefined);
    const last = rows[rows.length - 1];
    const nextCursor = rows.length === limit ? encodeCursor({ p: last.priorityRank, c: last.cursorAt, i: last.id }) : null;
    return { items: rows.map(toPageItem), nextCursor };
  }

  /** Best match first (see IssueListRepository.search); the cursor holds the tier of the page's last issue and how many of that tier's issues were shown. */
  private async searchPage(companyId: string, filter: IssueListFilter, search: string, limit: number, cursor: Cursor): Promise<IssuePage> {
    const { found, rows: byId } = await this.repo.search(companyId, filter, search, limit, { t: cursor.t, o: cursor.o });
    const items = found.flatMap((f) => (byId.has(f.id) ? [toPageItem(byId.get(f.id) as PageRecord)] : []));
    let nextCursor: string | null = null;
    if (found.length === limit) {
      const t = found[found.length - 1].tier;
      const shown = found.filter((r) => r.tier === t).length;
      nextCursor = encodeCursor({ t, o: (t === (cursor.t ?? 0) ? (cursor.o ?? 0) : 0) + shown });
    }
    return { items, nextCursor };
  }

  /** `me` stands for the calling board user; agents may not use it. */
  private resolveMe(actor: Actor, q: ListIssuesQueryDto): Partial<Record<(typeof ME_FILTERS)[number], string>> {
    const out: Partial<Record<(typeof ME_FILTERS)[number], string>> = {};
    for (const f of ME_FILTERS) {
      const v = q[f];
      if (v === undefined) continue;
      if (v === 'me') {
        if (actor.kind !== 'board') throw forbidden(`${f}=me is only available to board callers`, { field: f });
        out[f] = actor.userId;
      } else out[f] = v;
    }
    return out;
  }
}

const toPageItem = (r: PageRecord) => toIssueResponse(r, r.labels, r.blockers);

function encodeCursor(c: Cursor): string {
  return Buffer.from(JSON.stringify(c)).toString('base64url');
}

function decodeCursor(raw: string | undefined): Cursor {
  if (!raw) return {};
  try {
    const c = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8')) as Cursor;
    const keyset = Number.isInteger(c.p) && typeof c.c === 'string' && TIMESTAMP_TEXT.test(c.c) && isUuid(c.i);
    const position = (v: unknown) => Number.isInteger(v) && (v as number) >= 0 && (v as number) <= MAX_POSITION;
    const offset = position(c.o) && (c.t === undefined || position(c.t));
    if (keyset || offset) return c;
  } catch {
    /* fall through */
  }
  throw issueError('invalid_cursor', 'cursor is not a cursor returned by this list', { field: 'cursor' });
}
