import { Injectable } from '@nestjs/common';
import { CompanyScopedRepository } from '../../database/company-scoped.repository';
import { Db } from '../../database/db.service';
import { issueSetsSql, IssueSets } from './issue-view';
import { ISSUE_COLUMNS, issueColumns, IssueRecord, issueRecordColumns } from './issue.types';
import { recordColumns } from '../../database/row-mapping';

/** The list filters, already validated (`me` resolved to the calling user). */
export interface IssueListFilter {
  statuses?: string[];
  assigneeAgentId?: string;
  participantAgentId?: string;
  assigneeUserId?: string;
  touchedByUserId?: string;
  inboxArchivedByUserId?: string;
  unreadForUserId?: string;
  projectId?: string;
  executionWorkspaceId?: string;
  parentId?: string;
  labelId?: string;
  originKind?: string;
  originId?: string;
  includeRoutineExecutions: boolean;
}

export type PageRecord = IssueRecord & IssueSets & { priorityRank?: number; cursorAt?: string };

/** A found issue of a search and its match tier. */
export interface SearchHit {
  tier: number;
  id: string;
}

/**
 * The statements of GET /companies/{companyId}/issues. Without a search: priority order (critical
 * first, then newest), paged by keyset on (priority_rank, created_at, id), an index range scan on
 * issues_list_idx at any depth. With a search: best match first, by match tiers (see `search`).
 */
@Injectable()
export class IssueListRepository extends CompanyScopedRepository {
  constructor(db: Db) {
    super(db);
  }

  /**
   * A page in priority order, with labels and blockers; after the keyset position `after`
   * (priority rank, createdAt as text, id) when given.
   */
  page(companyId: string, f: IssueListFilter, limit: number, after?: { p?: number; c?: string; i: string }): Promise<PageRecord[]> {
    const { where, params } = this.filter(f);
    const p = (v: unknown) => `$${params.push(v) + 1}`;
    const cols = `${issueColumns('i')}, i.priority_rank, i.created_at::text AS cursor_at`;
    const order = 'ORDER BY i.priority_rank, i.created_at DESC, i.id DESC';
    // the limit is written into the statement: with a parameter there, Postgres costs a generic plan
    // as if 10% of the company's issues came back and keeps re-planning every execution instead
    const lim = String(limit);
    let sql: string;
    if (after) {
      // keyset continuation as two index range scans: the rest of the cursor's priority band, then
      // the lower priorities (an OR of both would scan the index from its start)
      const [rk, c, id] = [p(after.p), p(after.c), p(after.i)];
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
    return this.rows<PageRecord>(companyId, `${withSets(sql)} ORDER BY page.priority_rank, page.created_at DESC, page.id DESC`, params);
  }

  /**
   * Best match first. Matches fall into tiers, best first: the exact identifier; every word in the
   * title (or identifier); every word in the issue's text (title, identifier, description); every
   * word in one of its comments. An issue counts in its best tier only; within a tier the list's
   * priority order applies. Each tier reads at most a page in that order, from the list index
   * (stopping at the page's end: a broad term reads a page's worth of rows, not every match) or,
   * for a rare term, from the full-text index. Postgres picks per tier, so a search is planned for its
   * values every time, never with a generic plan (its plan depends on how many issues a term matches).
   *
   * The tiers are read in groups (SEARCH_GROUPS), identifier and title first, the rest only when
   * those leave the page short; then one statement reads the page's issues by id. A tier's condition
   * excludes the tiers before it, and Postgres estimates "matches the text but not the title" as if
   * the two were unrelated: for a term in most titles it would scan the whole company for the few
   * text-only matches. Read after a short title tier, the estimate holds. The position `from` is
   * the tier of the previous page's last issue and how many of that tier's issues were shown.
   *
   * Returns the hits in order (at most `limit`) and the page's issues by id.
   */
  async search(
    companyId: string,
    f: IssueListFilter,
    search: string,
    limit: number,
    position: { t?: number; o?: number },
  ): Promise<{ found: SearchHit[]; rows: Map<string, PageRecord> }> {
    const { where, params: baseParams } = this.filter(f);
    const tiers = searchTiers(search);
    const found: SearchHit[] = [];
    let from = position.t ?? 0;
    let offset = position.o ?? 0;
    const severalWords = queryWords(search).length > 1;
    for (const group of SEARCH_GROUPS) {
      const wanted = group.filter((tier) => tier >= from && tiers[tier]);
      if (!wanted.length || found.length === limit) continue;
      const params = [...baseParams];
      const p = (v: unknown) => `$${params.push(v) + 1}`;
      const want = limit - found.length;
      const read = (tier: number, source: string, rank: string) => {
        const skip = tier === from && offset ? ` OFFSET ${p(offset)}` : '';
        return `(SELECT ${tier} AS tier, i.id, i.priority_rank, i.created_at FROM ${source}
                  WHERE ${where.join(' AND ')} AND ${(tiers[tier] as Tier)(p)}
                  ORDER BY ${rank}, i.created_at DESC, i.id DESC LIMIT ${want}${skip})`;
      };
      const run = (sql: string, args: unknown[]) =>
        this.rows<SearchHit>(
          companyId,
          `SELECT tier, id FROM (${sql}) m ORDER BY tier, priority_rank, created_at DESC, id DESC LIMIT ${want}`,
          args,
          { plan: 'custom' },
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
      ? await this.rows<PageRecord>(
          companyId,
          `SELECT page.*, ${issueSetsSql('page', '$1')}
             FROM (SELECT ${issueRecordColumns()} FROM issues WHERE company_id = $1 AND id = ANY($2::uuid[])) page`,
          [found.map((h) => h.id)],
        )
      : [];
    return { found, rows: new Map(rows.map((r) => [r.id, r])) };
  }

  /**
   * The WHERE conditions (over alias `i`) of the filters, and their parameters: the company is `$1`
   * (the scoped path puts it first), so these start at `$2`.
   */
  private filter(f: IssueListFilter): { where: string[]; params: unknown[] } {
    const params: unknown[] = [];
    const p = (v: unknown) => `$${params.push(v) + 1}`;
    const where = ['i.company_id = $1', 'i.hidden_at IS NULL'];
    if (f.statuses !== undefined) where.push(`i.status = ANY(${p(f.statuses)}::text[])`);
    if (f.assigneeAgentId) where.push(`i.assignee_agent_id = ${p(f.assigneeAgentId)}`);
    if (f.participantAgentId) {
      const a = p(f.participantAgentId);
      where.push(`(i.assignee_agent_id = ${a} OR i.created_by_agent_id = ${a}
        OR EXISTS (SELECT 1 FROM issue_comments c WHERE c.issue_id = i.id AND c.author_agent_id = ${a}))`);
    }
    if (f.assigneeUserId) where.push(`i.assignee_user_id = ${p(f.assigneeUserId)}`);
    if (f.touchedByUserId) where.push(touchedBy(p(f.touchedByUserId)));
    if (f.inboxArchivedByUserId) {
      // the user's inbox: issues not archived by them, or with news since they archived
      where.push(`NOT EXISTS (SELECT 1 FROM issue_user_states s WHERE s.issue_id = i.id AND s.user_id = ${p(f.inboxArchivedByUserId)}
        AND s.inbox_archived_at IS NOT NULL AND s.inbox_archived_at >= i.updated_at)`);
    }
    if (f.unreadForUserId) {
      const u = p(f.unreadForUserId);
      where.push(touchedBy(u));
      where.push(`EXISTS (SELECT 1 FROM issue_comments c WHERE c.issue_id = i.id AND c.author_user_id IS DISTINCT FROM ${u}
        AND c.created_at > coalesce((SELECT s.last_read_at FROM issue_user_states s WHERE s.issue_id = i.id AND s.user_id = ${u}), '-infinity'))`);
    }
    if (f.projectId) where.push(`i.project_id = ${p(f.projectId)}`);
    if (f.executionWorkspaceId) where.push(`i.execution_workspace_id = ${p(f.executionWorkspaceId)}`);
    if (f.parentId) where.push(`i.parent_id = ${p(f.parentId)}`);
    if (f.labelId) where.push(`EXISTS (SELECT 1 FROM issue_labels il WHERE il.issue_id = i.id AND il.label_id = ${p(f.labelId)})`);
    if (f.originKind) where.push(`i.origin_kind = ${p(f.originKind)}`);
    if (f.originId) where.push(`i.origin_id = ${p(f.originId)}`);
    if (!f.includeRoutineExecutions && !f.originKind && !f.originId) where.push(`i.origin_kind <> 'routine_execution'`);
    return { where, params };
  }

  /** Issues (hidden ones excepted) of each of the projects, for the projects' `taskCount`. */
  async countByProject(companyId: string, projectIds: string[]): Promise<Map<string, number>> {
    const rows = await this.rows<{ projectId: string; n: number }>(
      companyId,
      `SELECT project_id AS "projectId", count(*)::int AS n FROM issues
        WHERE company_id = $1 AND project_id = ANY($2::uuid[]) AND hidden_at IS NULL GROUP BY project_id`,
      [projectIds],
    );
    return new Map(rows.map((r) => [r.projectId, r.n]));
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
 * The match tiers of a search, best first (see IssueListRepository.search); a tier's number is its
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
/** Tiers read by one statement each (see IssueListRepository.search). */
const SEARCH_GROUPS = [
  [0, 1],
  [2, 3],
];

/** A page's rows (alias `page`) as records with their labels and blockers, read in the same statement. */
const withSets = (sql: string) =>
  `SELECT ${recordColumns(`${ISSUE_COLUMNS}, priority_rank, cursor_at`, 'page')}, ${issueSetsSql('page', 'page.company_id')} FROM (${sql}) page`;

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
