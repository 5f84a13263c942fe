import { Injectable } from '@nestjs/common';
import type { Actor } from '../../common/auth/actor';
import { badRequest, forbidden } from '../../common/errors/domain-error';
import { isUuid } from '../../common/http/uuid';
import { Db } from '../../database/db.service';
import { IssueResponseDto, ListIssuesQueryDto } from './dto/issue.dto';
import { issueSetsSql, IssueSets, toIssueResponse } from './issue-store.service';
import { ISSUE_COLUMNS, ISSUE_STATUSES, issueColumns, IssueRow } from './issue.types';

export const DEFAULT_LIST_LIMIT = 500;
export const MAX_LIST_LIMIT = 1000;

/** a timestamptz as Postgres prints it, e.g. `2026-01-02 03:04:05.123456+00` */
const TIMESTAMP_TEXT = /^\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}(\.\d{1,6})?([+-]\d{2}(:?\d{2})?|Z)?$/;

const ME_FILTERS = ['assigneeUserId', 'touchedByUserId', 'inboxArchivedByUserId', 'unreadForUserId'] as const;

interface Cursor {
  /** keyset position in the priority order: priority rank, createdAt (full precision, as text), id */
  p?: number;
  c?: string;
  i?: string;
  /** offset in best-match order (q) */
  o?: number;
}

export interface IssuePage {
  items: IssueResponseDto[];
  nextCursor: string | null;
}

/**
 * GET /companies/{companyId}/issues. Without `q`: priority order (critical first, then newest),
 * paged by keyset on (priority_rank, created_at, id), an index range scan on issues_list_idx at any
 * depth. With `q`: best match first (full-text rank over title, identifier, description and comments,
 * an exact identifier first), paged by offset since ranks are not stable keys.
 */
@Injectable()
export class IssueListService {
  constructor(private readonly db: Db) {}

  async list(actor: Actor, companyId: string, q: ListIssuesQueryDto): Promise<IssuePage> {
    const params: unknown[] = [companyId];
    const p = (v: unknown) => {
      params.push(v);
      return `$${params.length}`;
    };
    const where = ['i.company_id = $1', 'i.hidden_at IS NULL'];
    const users = this.resolveMe(actor, q);

    if (q.status !== undefined) {
      const statuses = q.status.split(',').map((s) => s.trim()).filter(Boolean);
      const bad = statuses.filter((s) => !(ISSUE_STATUSES as readonly string[]).includes(s));
      if (!statuses.length || bad.length) throw badRequest(`status: unknown value(s) ${bad.join(', ')}`, { field: 'status' }, 'validation_failed');
      where.push(`i.status = ANY(${p(statuses)}::text[])`);
    }
    if (q.assigneeAgentId) where.push(`i.assignee_agent_id = ${p(q.assigneeAgentId)}`);
    if (q.participantAgentId) {
      const a = p(q.participantAgentId);
      where.push(`(i.assignee_agent_id = ${a} OR i.created_by_agent_id = ${a}
        OR EXISTS (SELECT 1 FROM issue_comments c WHERE c.issue_id = i.id AND c.author_agent_id = ${a}))`);
    }
    if (users.assigneeUserId) where.push(`i.assignee_user_id = ${p(users.assigneeUserId)}`);
    if (users.touchedByUserId) where.push(touchedBy(p(users.touchedByUserId)));
    if (users.inboxArchivedByUserId) {
      // the user's inbox: issues not archived by them, or with news since they archived
      where.push(`NOT EXISTS (SELECT 1 FROM issue_user_states s WHERE s.issue_id = i.id AND s.user_id = ${p(users.inboxArchivedByUserId)}
        AND s.inbox_archived_at IS NOT NULL AND s.inbox_archived_at >= i.updated_at)`);
    }
    if (users.unreadForUserId) {
      const u = p(users.unreadForUserId);
      where.push(touchedBy(u));
      where.push(`EXISTS (SELECT 1 FROM issue_comments c WHERE c.issue_id = i.id AND c.author_user_id IS DISTINCT FROM ${u}
        AND c.created_at > coalesce((SELECT s.last_read_at FROM issue_user_states s WHERE s.issue_id = i.id AND s.user_id = ${u}), '-infinity'))`);
    }
    if (q.projectId) where.push(`i.project_id = ${p(q.projectId)}`);
    if (q.executionWorkspaceId) where.push(`i.execution_workspace_id = ${p(q.executionWorkspaceId)}`);
    if (q.parentId) where.push(`i.parent_id = ${p(q.parentId)}`);
    if (q.labelId) where.push(`EXISTS (SELECT 1 FROM issue_labels il WHERE il.issue_id = i.id AND il.label_id = ${p(q.labelId)})`);
    if (q.originKind) where.push(`i.origin_kind = ${p(q.originKind)}`);
    if (q.originId) where.push(`i.origin_id = ${p(q.originId)}`);
    if (q.includeRoutineExecutions !== 'true' && !q.originKind && !q.originId) where.push(`i.origin_kind <> 'routine_execution'`);

    const limit = Math.min(q.limit ?? DEFAULT_LIST_LIMIT, MAX_LIST_LIMIT);
    const cursor = decodeCursor(q.cursor);
    const search = q.q?.trim();
    let sql: string;
    if (search) {
      // each source scores its matches with the filters applied and the sort keys read from the same
      // row; only the page's ids are then fetched whole (fetching every match by id cost most of the time)
      const order = 'ORDER BY score DESC, priority_rank, created_at DESC, id DESC';
      sql = `SELECT ${issueColumns('i')}, i.priority_rank, s.score FROM (
          SELECT id, sum(r) AS score, priority_rank, created_at FROM (${scoredMatches(search, where.join(' AND '), p)}) s
           GROUP BY id, priority_rank, created_at ${order} LIMIT ${p(limit)} OFFSET ${p(cursor.o ?? 0)}) s
        JOIN issues i ON i.id = s.id`;
    } else {
      const cols = `${issueColumns('i')}, i.priority_rank, i.created_at::text AS cursor_at`;
      const order = 'ORDER BY i.priority_rank, i.created_at DESC, i.id DESC';
      // the limit is written into the statement: with a parameter there, Postgres costs a generic plan
      // as if 10% of the company's issues came back and keeps re-planning every execution instead
      const lim = String(limit);
      if (cursor.i) {
        // keyset continuation as two index range scans: the rest of the cursor's priority band, then
        // the lower priorities (an OR of both would scan the index from its start)
        const [rk, c, id] = [p(cursor.p), p(cursor.c), p(cursor.i)];
        const filter = where.join(' AND ');
        sql = `SELECT * FROM (
            (SELECT ${cols} FROM issues i WHERE ${filter} AND i.priority_rank = ${rk}
               AND (i.created_at, i.id) < (${c}::timestamptz, ${id}::uuid) ${order} LIMIT ${lim})
            UNION ALL
            (SELECT ${cols} FROM issues i WHERE ${filter} AND i.priority_rank > ${rk} ${order} LIMIT ${lim})
          ) page ORDER BY priority_rank, created_at DESC, id DESC LIMIT ${lim}`;
      } else {
        sql = `SELECT ${cols} FROM issues i WHERE ${where.join(' AND ')} ${order} LIMIT ${lim}`;
      }
    }
    // labels and blockers of the page in the same round trip
    const order = `${search ? 'page.score DESC, ' : ''}page.priority_rank, page.created_at DESC, page.id DESC`;
    // a search is planned for its terms every time: how many issues a term matches decides the plan
    const rows = await this.db.query<IssueRow & IssueSets & { priority_rank?: number; cursor_at?: string }>(
      `SELECT page.*, ${issueSetsSql('page')} FROM (${sql}) page ORDER BY ${order}`,
      params,
      { prepare: !search },
    );
    let nextCursor: string | null = null;
    if (rows.length === limit) {
      const last = rows[rows.length - 1];
      nextCursor = encodeCursor(
        search ? { o: (cursor.o ?? 0) + limit } : { p: last.priority_rank, c: last.cursor_at, i: last.id },
      );
    }
    return { items: rows.map((r) => toIssueResponse(r, r.labels, r.blockers)), nextCursor };
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

/** Issues a user created, is assigned to, commented on or opened. */
function touchedBy(u: string): string {
  return `(i.created_by_user_id = ${u} OR i.assignee_user_id = ${u}
    OR EXISTS (SELECT 1 FROM issue_comments c WHERE c.issue_id = i.id AND c.author_user_id = ${u})
    OR EXISTS (SELECT 1 FROM issue_user_states s WHERE s.issue_id = i.id AND s.user_id = ${u}))`;
}

/**
 * `(id, r, priority_rank, created_at)` of the issues matching `q` that pass `filter` (over alias
 * `i`): full text over the issue vector (title, identifier, description) and the comment vectors,
 * or the exact identifier. Each source is read where its index finds it (GIN for text, the unique
 * index for the identifier); scores add up per issue: exact identifier 100, plus the issue's text
 * rank, plus its best comment's rank.
 */
function scoredMatches(search: string, filter: string, p: (v: unknown) => string): string {
  const ident = p(search.toUpperCase());
  const keys = 'i.id, i.priority_rank, i.created_at';
  const sources = [`SELECT ${keys}, 100::real AS r FROM issues i WHERE i.identifier = ${ident} AND ${filter}`];
  const terms = prefixQuery(search);
  if (terms) {
    const t = p(terms);
    const tsq = `(to_tsquery('english', ${t}) || to_tsquery('simple', ${t}))`;
    sources.push(
      `SELECT ${keys}, ts_rank(i.search_vector, ${tsq}) FROM issues i WHERE i.search_vector @@ ${tsq} AND ${filter}`,
      `SELECT ${keys}, c.r FROM (SELECT issue_id, max(ts_rank(search_vector, ${tsq})) AS r FROM issue_comments
          WHERE company_id = $1 AND search_vector @@ ${tsq} GROUP BY issue_id) c
        JOIN issues i ON i.id = c.issue_id WHERE ${filter}`,
    );
  }
  return sources.join(' UNION ALL ');
}

/** Words of the query as prefix terms, all required: `fix log` -> `fix:* & log:*`. */
export function prefixQuery(q: string): string {
  const words = q.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
  return words.slice(0, 20).map((w) => `${w}:*`).join(' & ');
}

function encodeCursor(c: Cursor): string {
  return Buffer.from(JSON.stringify(c)).toString('base64url');
}

function decodeCursor(raw: string | undefined): Cursor {
  if (!raw) return {};
  try {
    const c = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8')) as Cursor;
    const keyset = Number.isInteger(c.p) && typeof c.c === 'string' && TIMESTAMP_TEXT.test(c.c) && isUuid(c.i);
    const offset = Number.isInteger(c.o) && (c.o as number) >= 0;
    if (keyset || offset) return c;
  } catch {
    /* fall through */
  }
  throw badRequest('cursor is not a cursor returned by this list', { field: 'cursor' }, 'invalid_cursor');
}
