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
      const statuses = q.status
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean);
      const bad = statuses.filter((s) => !(ISSUE_STATUSES as readonly string[]).includes(s));
      if (!statuses.length || bad.length)
        throw badRequest(`status: unknown value(s) ${bad.join(', ')}`, { field: 'status' }, 'validation_failed');
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
    if (search) return this.searchPage(search, where, params, limit, cursor);

    const cols = `${issueColumns('i')}, i.priority_rank, i.created_at::text AS cursor_at`;
    const order = 'ORDER BY i.priority_rank, i.created_at DESC, i.id DESC';
    // the limit is written into the statement: with a parameter there, Postgres costs a generic plan
    // as if 10% of the company's issues came back and keeps re-planning every execution instead
    const lim = String(limit);
    let sql: string;
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
    const rows = await this.db.query<PageRow>(`${withSets(sql)} ORDER BY page.priority_rank, page.created_at DESC, page.id DESC`, params);
    const last = rows[rows.length - 1];
    const nextCursor = rows.length === limit ? encodeCursor({ p: last.priority_rank, c: last.cursor_at, i: last.id }) : null;
    return { items: rows.map(toPageItem), nextCursor };
  }

  /**
   * Best match first. Matches fall into tiers, best first: the exact identifier; every word in the
   * title (or identifier); every word in the issue's text (title, identifier, description); every
   * word in one of its comments. An issue counts in its best tier only; within a tier the list's
   * priority order applies. Each tier reads at most a page in that order, from the list index
   * (stopping at the page's end: a broad term reads a page's worth of rows, not every match) or,
   * for a rare term, from the full-text index. Postgres picks per tier, so a search is never a
   * prepared statement (its plan depends on how many issues a term matches).
   *
   * The tiers are read in groups (SEARCH_GROUPS), identifier and title first, the rest only when
   * those leave the page short; then one statement reads the page's issues by id. A tier's condition
   * excludes the tiers before it, and Postgres estimates "matches the text but not the title" as if
   * the two were unrelated: for a term in most titles it would scan the whole company for the few
   * text-only matches. Read after a short title tier, the estimate holds. The cursor holds the tier
   * of the page's last issue and how many of that tier's issues were shown.
   */
  private async searchPage(search: string, where: string[], baseParams: unknown[], limit: number, cursor: Cursor): Promise<IssuePage> {
    const tiers = searchTiers(search);
    const found: Array<{ tier: number; id: string }> = [];
    let from = cursor.t ?? 0;
    let offset = cursor.o ?? 0;
    const severalWords = queryWords(search).length > 1;
    for (const group of SEARCH_GROUPS) {
      const wanted = group.filter((tier) => tier >= from && tiers[tier]);
      if (!wanted.length || found.length === limit) continue;
      const params = [...baseParams];
      const p = (v: unknown) => `$${params.push(v)}`;
      const want = limit - found.length;
      const read = (tier: number, source: string, rank: string) => {
        const skip = tier === from && offset ? ` OFFSET ${p(offset)}` : '';
        return `(SELECT ${tier} AS tier, i.id, i.priority_rank, i.created_at FROM ${source}
                  WHERE ${where.join(' AND ')} AND ${(tiers[tier] as Tier)(p)}
                  ORDER BY ${rank}, i.created_at DESC, i.id DESC LIMIT ${want}${skip})`;
      };
      const run = (sql: string, args: unknown[]) =>
        this.db.query<{ tier: number; id: string }>(
          `SELECT tier, id FROM (${sql}) m ORDER BY tier, priority_rank, created_at DESC, id DESC LIMIT ${want}`,
          args,
          {
            prepare: false,
          },
        );
      // Several words: Postgres multiplies their frequencies as if they were unrelated, so for two
      // common words that rarely meet it would read the list index in order and scan the whole
      // company. First the group's best tier is looked for among the first SCAN_BUDGET issues in list
      // order (words that often meet fill the page there); if that does not fill the page, the
      // matches are read from the full-text index, which intersects the words' entries exactly, and
      // sorted (`+ 0` keeps the list index's order out of reach).
      if (severalWords) {
        const head = `(SELECT * FROM issues i WHERE ${where.join(' AND ')} ORDER BY i.priority_rank, i.created_at DESC, i.id DESC LIMIT ${SCAN_BUDGET}) i`;
        const rows = await run(read(wanted[0], head, 'i.priority_rank'), params);
        if (rows.length === want) {
          found.push(...rows);
          break;
        }
        params.length = baseParams.length;
      }
      const rank = severalWords ? 'i.priority_rank + 0' : 'i.priority_rank';
      found.push(...(await run(wanted.map((tier) => read(tier, 'issues i', rank)).join(' UNION ALL '), params)));
      [from, offset] = [group[group.length - 1] + 1, 0];
    }
    // the page's issues whole, by id: a statement planned once (the search statements are planned every time)
    const rows = found.length
      ? await this.db.query<PageRow>(withSets(`SELECT ${ISSUE_COLUMNS} FROM issues WHERE id = ANY($1::uuid[])`), [found.map((f) => f.id)])
      : [];
    const byId = new Map(rows.map((r) => [r.id, r]));
    const items = found.flatMap((f) => (byId.has(f.id) ? [toPageItem(byId.get(f.id) as PageRow)] : []));
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

/** Issues a user created, is assigned to, commented on or opened. */
function touchedBy(u: string): string {
  return `(i.created_by_user_id = ${u} OR i.assignee_user_id = ${u}
    OR EXISTS (SELECT 1 FROM issue_comments c WHERE c.issue_id = i.id AND c.author_user_id = ${u})
    OR EXISTS (SELECT 1 FROM issue_user_states s WHERE s.issue_id = i.id AND s.user_id = ${u}))`;
}

type Param = (v: unknown) => string;
/** The condition (over alias `i`) of one match tier; `p` adds a parameter. */
type Tier = (p: Param) => string;

/**
 * The match tiers of a search, best first (see IssueListService.searchPage); a tier's number is its
 * place here, so the identifier tier is always there (null when the search is no identifier). The
 * title tier reads `title_vector` (title and identifier words), the text tier `search_vector`
 * (title, identifier and description); each tier leaves out the issues of the tiers before it.
 */
function searchTiers(search: string): Array<Tier | null> {
  const tiers: Array<Tier | null> = [];
  const identifier = IDENTIFIER.test(search) ? search.toUpperCase() : null;
  const notIdentifier = (p: Param) => (identifier ? ` AND i.identifier <> ${p(identifier)}` : '');
  tiers.push(identifier ? (p) => `i.identifier = ${p(identifier)}` : null);
  const terms = prefixQuery(search);
  if (!terms) return tiers;
  const query = (p: Param) => `(to_tsquery('english', ${p(terms)}) || to_tsquery('simple', ${p(terms)}))`;
  const inTitle = (p: Param) => `i.title_vector @@ ${query(p)}`;
  const inText = (p: Param) => `i.search_vector @@ ${query(p)}`;
  tiers.push(
    (p) => `${inTitle(p)}${notIdentifier(p)}`,
    (p) => `${inText(p)} AND NOT ${inTitle(p)}${notIdentifier(p)}`,
    (p) => `EXISTS (SELECT 1 FROM issue_comments c WHERE c.issue_id = i.id AND c.search_vector @@ ${query(p)})
              AND NOT ${inText(p)}${notIdentifier(p)}`,
  );
  return tiers;
}

const IDENTIFIER = /^[A-Za-z0-9]+-\d+$/;
/** Issues in list order a several-word search looks through before it reads the full-text index. */
const SCAN_BUDGET = 1000;
/** Tiers read by one statement each (see IssueListService.searchPage). */
const SEARCH_GROUPS = [
  [0, 1],
  [2, 3],
];

type PageRow = IssueRow & IssueSets & { priority_rank?: number; cursor_at?: string };

/** A page's rows (alias `page`) with their labels and blockers, read in the same statement. */
const withSets = (sql: string) => `SELECT page.*, ${issueSetsSql('page')} FROM (${sql}) page`;
const toPageItem = (r: PageRow) => toIssueResponse(r, r.labels, r.blockers);

/**
 * Words of the query as prefix terms, all required: `fix log-in` -> `'fix':* & 'log-in':*`. Each word
 * is quoted, so Postgres' parser splits it as it split the documents (`ABC-12` is `abc` followed by
 * `-12` there); words without a letter or digit are dropped.
 */
export function prefixQuery(q: string): string {
  return queryWords(q)
    .map((w) => `'${w.toLowerCase().replace(/\\/g, '\\\\').replace(/'/g, "''")}':*`)
    .join(' & ');
}

/** The words of a search (at most 20): runs of non-space with a letter or digit. */
function queryWords(q: string): string[] {
  return q
    .split(/\s+/)
    .filter((w) => /[\p{L}\p{N}]/u.test(w))
    .slice(0, 20);
}

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
  throw badRequest('cursor is not a cursor returned by this list', { field: 'cursor' }, 'invalid_cursor');
}
