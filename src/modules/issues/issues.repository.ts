import { Injectable } from '@nestjs/common';
import { CompanyScopedRepository } from '../../database/company-scoped.repository';
import { Db } from '../../database/db.service';
import { recordColumns, snakeName } from '../../database/row-mapping';
import { IssueFields, issueRecordColumns, IssueRecord } from './issue.types';
import { IssueSets, issueSetsSql } from './issue-view';

/** SQL: the checkout run of the `issues` row is not live (finished, failed, cancelled, timed out, or missing). */
// reads heartbeat_runs (owned by heartbeat; FOREIGN_READS): the liveness of the checkout run, in the checkout's own UPDATE
const CHECKOUT_RUN_STALE = `NOT EXISTS (SELECT 1 FROM heartbeat_runs r WHERE r.id = issues.checkout_run_id AND r.status IN ('queued','running'))`;

const ISSUE_RECORD = issueRecordColumns();

/** One issue of a package import, numbered. */
export interface ImportedIssueValues {
  id: string;
  num: number;
  title: string;
  description: string | null;
  status: string;
  priority: string;
  projectId: string | null;
  goalId: string | null;
  parentId: string | null;
  assigneeAgentId: string | null;
}

/** The issues table: issue rows, their creation and updates, checkouts, trees and blockers, a board user's view state. */
@Injectable()
export class IssuesRepository extends CompanyScopedRepository {
  constructor(db: Db) {
    super(db);
  }

  /** Ids among `uuids` of hidden issues of the company (outside any transaction). */
  async hiddenAmong(companyId: string, uuids: string[]): Promise<string[]> {
    const rows = await this.rows<{ id: string }>(
      companyId,
      `SELECT id FROM issues WHERE company_id = $1 AND id = ANY($2::uuid[]) AND hidden_at IS NOT NULL`,
      [uuids],
      { detached: true },
    );
    return rows.map((r) => r.id);
  }

  /** The issue of the company whose id (or upper-case identifier) is `value`. */
  findBy(companyId: string, column: 'id' | 'identifier', value: string, lock = false): Promise<IssueRecord | null> {
    const forUpdate = lock ? ' FOR UPDATE' : '';
    return column === 'id'
      ? this.row<IssueRecord>(companyId, `SELECT ${ISSUE_RECORD} FROM issues WHERE company_id = $1 AND id = $2${forUpdate}`, [value])
      : this.row<IssueRecord>(companyId, `SELECT ${ISSUE_RECORD} FROM issues WHERE company_id = $1 AND identifier = $2${forUpdate}`, [
          value,
        ]);
  }

  /** Every visible issue of a company with its label names, by number (portability export). */
  allOfCompany(companyId: string, includeRoutineExecutions: boolean): Promise<Array<IssueRecord & { labelNames: string[] }>> {
    return this.rows<IssueRecord & { labelNames: string[] }>(
      companyId,
      `SELECT ${issueRecordColumns('i')},
              array(SELECT l.name FROM issue_labels il JOIN labels l ON l.id = il.label_id WHERE il.issue_id = i.id ORDER BY lower(l.name)) AS "labelNames"
         FROM issues i WHERE i.company_id = $1 AND i.hidden_at IS NULL ${includeRoutineExecutions ? '' : `AND i.origin_kind <> 'routine_execution'`}
        ORDER BY i.issue_number`,
    );
  }

  /** Issues of the company among `ids` (any order). */
  findManyOfCompany(companyId: string, ids: string[]): Promise<IssueRecord[]> {
    return this.rows<IssueRecord>(companyId, `SELECT ${ISSUE_RECORD} FROM issues WHERE company_id = $1 AND id = ANY($2::uuid[])`, [ids]);
  }

  /** Labels and blocker ids of a page of issues of the company, in one query. */
  async setsOf(companyId: string, issueIds: string[]): Promise<Map<string, IssueSets>> {
    // one issue (every single-issue answer) has its own statement: Postgres plans `unnest` of an array
    // parameter for 100 elements, so a generic plan never won against one for a single id and the
    // statement was planned anew on every request
    const rows =
      issueIds.length === 1
        ? await this.rows<IssueSets & { id: string }>(
            companyId,
            `SELECT x.id, ${issueSetsSql('x', '$1')} FROM (SELECT $2::uuid AS id) AS x`,
            issueIds,
          )
        : await this.rows<IssueSets & { id: string }>(
            companyId,
            `SELECT x.id, ${issueSetsSql('x', '$1')} FROM unnest($2::uuid[]) AS x(id)`,
            [issueIds],
          );
    return new Map(rows.map((r) => [r.id, r]));
  }

  // ---- create and update

  /**
   * Inserts an issue of the company numbered from its counter, in one statement: the counter is the
   * companies module's, advanced through its database port `take_issue_numbers` (DATABASE_PORTS in
   * src/database/table-owners.ts), whose row lock serialises concurrent creates until commit. Null
   * for an unknown company.
   */
  async insertNumbered(companyId: string, fields: IssueFields): Promise<IssueRecord | null> {
    const cols = Object.keys(fields).map(snakeName);
    const [row] = await this.rows<IssueRecord>(
      companyId,
      `WITH n AS (SELECT issue_prefix, first FROM take_issue_numbers($1, 1))
       INSERT INTO issues (company_id, issue_number, identifier${cols.map((c) => `, ${c}`).join('')})
       SELECT $1, n.first, n.issue_prefix || '-' || n.first${cols.map((_, i) => `, $${i + 2}`).join('')} FROM n
       RETURNING ${ISSUE_RECORD}`,
      Object.values(fields),
    );
    return row ?? null;
  }

  /** Sets the given fields (and updated_at) of an issue of the company. */
  async updateFields(companyId: string, issueId: string, fields: IssueFields): Promise<IssueRecord> {
    const keys = Object.keys(fields).map(snakeName);
    const [row] = await this.returning<IssueRecord>(
      companyId,
      `UPDATE issues SET ${[...keys.map((k, i) => `${k} = $${i + 3}`), 'updated_at = now()'].join(', ')}
          WHERE company_id = $1 AND id = $2 RETURNING ${ISSUE_RECORD}`,
      [issueId, ...Object.values(fields)],
    );
    return row;
  }

  /** Inserts a batch of imported issues (numbers already reserved). */
  async insertImported(
    companyId: string,
    v: { prefix: string; agentId: string | null; userId: string | null; now: Date; issues: ImportedIssueValues[] },
  ): Promise<void> {
    const col = <T>(f: (i: ImportedIssueValues) => T) => v.issues.map(f);
    await this.rows(
      companyId,
      `INSERT INTO issues (id, company_id, issue_number, identifier, title, description, status, priority, project_id, goal_id, parent_id,
                             assignee_agent_id, created_by_agent_id, created_by_user_id, started_at, completed_at, cancelled_at)
         SELECT x.id, $1::uuid, x.num, $2::text || '-' || x.num, x.title, x.description, x.status, x.priority, x.project_id, x.goal_id, x.parent_id,
                x.assignee_agent_id, $3::uuid, $4::text,
                CASE WHEN x.status = 'in_progress' THEN $5::timestamptz END,
                CASE WHEN x.status = 'done' THEN $5::timestamptz END,
                CASE WHEN x.status = 'cancelled' THEN $5::timestamptz END
           FROM unnest($6::uuid[], $7::int[], $8::text[], $9::text[], $10::text[], $11::text[], $12::uuid[], $13::uuid[], $14::uuid[], $15::uuid[])
             AS x(id, num, title, description, status, priority, project_id, goal_id, parent_id, assignee_agent_id)`,
      [
        v.prefix,
        v.agentId,
        v.userId,
        v.now,
        col((i) => i.id),
        col((i) => i.num),
        col((i) => i.title),
        col((i) => i.description),
        col((i) => i.status),
        col((i) => i.priority),
        col((i) => i.projectId),
        col((i) => i.goalId),
        col((i) => i.parentId),
        col((i) => i.assigneeAgentId),
      ],
    );
  }

  /** Back to todo from done or cancelled (a comment with `reopen`). */
  async reopen(companyId: string, issueId: string): Promise<IssueRecord> {
    const [row] = await this.returning<IssueRecord>(
      companyId,
      `UPDATE issues SET status = 'todo', completed_at = NULL, cancelled_at = NULL, updated_at = now()
        WHERE company_id = $1 AND id = $2 RETURNING ${ISSUE_RECORD}`,
      [issueId],
    );
    return row;
  }

  /** Bumps updated_at (a new comment). */
  async touch(companyId: string, issueId: string): Promise<void> {
    await this.rows(companyId, `UPDATE issues SET updated_at = now() WHERE company_id = $1 AND id = $2`, [issueId]);
  }

  // ---- checkout

  /** The conditional UPDATE of a checkout: the row when this caller won it, null when another did or the status differs. */
  async checkout(
    companyId: string,
    issueId: string,
    agentId: string,
    runId: string | null,
    expectedStatuses: string[],
  ): Promise<IssueRecord | null> {
    const [won] = await this.returning<IssueRecord>(
      companyId,
      `UPDATE issues SET status = 'in_progress', assignee_agent_id = $3, checkout_run_id = $4,
              started_at = coalesce(started_at, now()), completed_at = NULL, cancelled_at = NULL, updated_at = now()
        WHERE company_id = $1 AND id = $2 AND status = ANY($5::text[])
          AND (assignee_agent_id IS NULL OR assignee_agent_id = $3)
          AND (checkout_run_id IS NULL OR checkout_run_id IS NOT DISTINCT FROM $4::uuid OR ${CHECKOUT_RUN_STALE})
        RETURNING ${ISSUE_RECORD}`,
      [issueId, agentId, runId, expectedStatuses],
    );
    return won ?? null;
  }

  /** Back to todo without agent assignee or checkout run. */
  async releaseCheckout(companyId: string, issueId: string): Promise<IssueRecord> {
    const [row] = await this.returning<IssueRecord>(
      companyId,
      `UPDATE issues SET status = 'todo', assignee_agent_id = NULL, checkout_run_id = NULL, updated_at = now()
        WHERE company_id = $1 AND id = $2 RETURNING ${ISSUE_RECORD}`,
      [issueId],
    );
    return row;
  }

  /** The in-progress issues checked out by the run go back to todo (assignee kept); their ids. */
  releaseRunCheckouts(companyId: string, runId: string): Promise<Array<{ id: string }>> {
    return this.returning<{ id: string }>(
      companyId,
      `UPDATE issues SET status = 'todo', checkout_run_id = NULL, updated_at = now()
          WHERE company_id = $1 AND checkout_run_id = $2 AND status = 'in_progress' RETURNING id`,
      [runId],
    );
  }

  /** The run takes over the checkout when it has none or its run is no longer live; false otherwise. */
  async adoptStaleCheckout(companyId: string, issueId: string, runId: string): Promise<boolean> {
    const [adopted] = await this.returning<{ id: string }>(
      companyId,
      `UPDATE issues SET checkout_run_id = $3 WHERE company_id = $1 AND id = $2 AND (checkout_run_id IS NULL OR ${CHECKOUT_RUN_STALE}) RETURNING id`,
      [issueId, runId],
    );
    return !!adopted;
  }

  /** Status and checkout owner as they are now. */
  async checkoutState(companyId: string, issueId: string): Promise<Pick<IssueRecord, 'status' | 'assigneeAgentId' | 'checkoutRunId'>> {
    const now = await this.row<IssueRecord>(
      companyId,
      `SELECT status, assignee_agent_id AS "assigneeAgentId", checkout_run_id AS "checkoutRunId" FROM issues WHERE company_id = $1 AND id = $2`,
      [issueId],
    );
    return now!;
  }

  // ---- trees and blockers (reads)

  /** The issue `parentId` and its parents up to the root, nearest first. */
  ancestors(companyId: string, parentId: string): Promise<IssueRecord[]> {
    return this.rows<IssueRecord>(
      companyId,
      `WITH RECURSIVE up AS (
         SELECT i.*, 1 AS depth FROM issues i WHERE i.company_id = $1 AND i.id = $2
         UNION ALL
         SELECT i.*, up.depth + 1 FROM issues i JOIN up ON i.id = up.parent_id WHERE i.company_id = $1 AND up.depth < 100)
       SELECT ${issueRecordColumns('up')} FROM up ORDER BY depth`,
      [parentId],
    );
  }

  /** The issues blocking this one (`blockedBy`) or blocked by it (`blocks`), oldest relation first. */
  related(companyId: string, issueId: string, dir: 'blockedBy' | 'blocks'): Promise<IssueRecord[]> {
    const [mine, other] = dir === 'blockedBy' ? ['related_issue_id', 'issue_id'] : ['issue_id', 'related_issue_id'];
    return this.rows<IssueRecord>(
      companyId,
      `SELECT ${issueRecordColumns('i')} FROM issue_relations r JOIN issues i ON i.id = r.${other}
        WHERE r.company_id = $1 AND r.${mine} = $2 AND r.type = 'blocks' ORDER BY r.created_at, i.id`,
      [issueId],
    );
  }

  /** Both sides of an issue's blocking relations in one statement: the issues blocking it, and those it blocks. */
  async relatedBoth(companyId: string, issueId: string): Promise<{ blockedBy: IssueRecord[]; blocks: IssueRecord[] }> {
    const rows = await this.rows<IssueRecord & { blocksIt: boolean }>(
      companyId,
      `SELECT r.related_issue_id = $2 AS "blocksIt", ${issueRecordColumns('i')} FROM issue_relations r
         JOIN issues i ON i.id = CASE WHEN r.related_issue_id = $2 THEN r.issue_id ELSE r.related_issue_id END
        WHERE r.company_id = $1 AND (r.related_issue_id = $2 OR r.issue_id = $2) AND r.type = 'blocks'
        ORDER BY r.created_at, i.id`,
      [issueId],
    );
    return { blockedBy: rows.filter((r) => r.blocksIt), blocks: rows.filter((r) => !r.blocksIt) };
  }

  /** Open issues with an assignee agent that `closedId` blocked and that have no open blocker left. */
  unblockedBy(companyId: string, closedId: string): Promise<Array<Pick<IssueRecord, 'id' | 'companyId' | 'status' | 'assigneeAgentId'>>> {
    return this.rows<IssueRecord>(
      companyId,
      `SELECT ${recordColumns('id, company_id, status, assignee_agent_id', 'i')} FROM issue_relations r JOIN issues i ON i.id = r.related_issue_id
        WHERE r.company_id = $1 AND r.issue_id = $2 AND r.type = 'blocks' AND i.assignee_agent_id IS NOT NULL AND i.status NOT IN ('done', 'cancelled')
          AND NOT EXISTS (
            SELECT 1 FROM issue_relations o JOIN issues b ON b.id = o.issue_id
             WHERE o.company_id = $1 AND o.related_issue_id = i.id AND o.type = 'blocks' AND b.status NOT IN ('done', 'cancelled'))`,
      [closedId],
    );
  }

  // ---- a board user's view state of an issue

  /** Sets `column` to `value` in the user's state of the issue (created on first use). */
  async setUserState(
    companyId: string,
    issueId: string,
    userId: string,
    column: 'last_read_at' | 'inbox_archived_at',
    value: 'now()' | 'NULL',
  ): Promise<{ lastReadAt: Date | null; inboxArchivedAt: Date | null }> {
    const [row] = await this.rows<{ lastReadAt: Date | null; inboxArchivedAt: Date | null }>(
      companyId,
      `INSERT INTO issue_user_states (issue_id, user_id, company_id, ${column}) VALUES ($2, $3, $1, ${value})
       ON CONFLICT (issue_id, user_id) DO UPDATE SET ${column} = ${value}
       RETURNING last_read_at AS "lastReadAt", inbox_archived_at AS "inboxArchivedAt"`,
      [issueId, userId],
    );
    return row;
  }
}
