import { Injectable } from '@nestjs/common';
import { CompanyScopedRepository, returningRows } from '../../database/company-scoped.repository';
import { Db } from '../../database/db.service';
import { iso, isoRequired } from '../../database/row-mapping';
import { IssueResponseDto, IssueSummaryDto, LabelSummaryDto } from './dto/issue.dto';
import { ISSUE_COLUMNS, issueColumns, IssueRow } from './issue.types';

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
    createdAt: isoRequired(r.created_at),
    updatedAt: isoRequired(r.updated_at),
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
    updatedAt: isoRequired(r.updated_at),
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

/** SQL: the checkout run of the `issues` row is not live (finished, failed, cancelled, timed out, or missing). */
// reads heartbeat_runs (owned by heartbeat)
const CHECKOUT_RUN_STALE = `NOT EXISTS (SELECT 1 FROM heartbeat_runs r WHERE r.id = issues.checkout_run_id AND r.status IN ('queued','running'))`;

/** Agents that can be woken at all; the heartbeat engine applies its own pause/budget policy on top. */
const WAKEABLE = `status NOT IN ('terminated', 'pending_approval')`;

/** SQL: the run's context snapshot names issue `i` (directly, or in the wakeup payload it carries). */
const RUN_CONTEXT_NAMES_ISSUE = `i.id::text IN (r.context_snapshot->>'issueId', r.context_snapshot->'payload'->>'issueId')`;

/** SQL: run `r` touches issue `i` (issue column, context snapshot, checkout, or the issue's activity). */
const RUN_TOUCHES_ISSUE = `(r.issue_id = i.id OR ${RUN_CONTEXT_NAMES_ISSUE} OR r.id = i.checkout_run_id
  OR r.id IN (SELECT a.run_id FROM activity_log a WHERE a.company_id = i.company_id AND a.entity_type = 'issue'
               AND a.entity_id = i.id::text AND a.run_id IS NOT NULL))`;

export interface ProjectRow {
  id: string;
  name: string;
  url_key: string;
  status: string;
  goal_id: string | null;
  color: string | null;
  paused_at: Date | null;
  archived_at: Date | null;
}

export interface GoalRow {
  id: string;
  title: string;
  level: string;
  status: string;
  parent_id: string | null;
}

export interface IssueRunRow {
  id: string;
  status: string;
  agent_id: string;
  adapter_type: string;
  started_at: Date | null;
  finished_at: Date | null;
  created_at: Date;
  invocation_source: string;
  usage_json: unknown;
  result_json: unknown;
  log_bytes: string | number;
}

export type InboxLiteRow = IssueRow & {
  blocker_ids: string[];
  run_id: string | null;
  run_status: string | null;
  run_started_at: Date | null;
};

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

/** The issues table (and the few reads of other domains' tables that issue pages join for speed). */
@Injectable()
export class IssuesRepository extends CompanyScopedRepository {
  constructor(db: Db) {
    super(db);
  }

  /** Ids among `uuids` of hidden issues of the company (outside any transaction). */
  async hiddenAmong(companyId: string, uuids: string[]): Promise<string[]> {
    const rows = (await this.db.dataSource.query(
      `SELECT id FROM issues WHERE company_id = $1 AND id = ANY($2::uuid[]) AND hidden_at IS NOT NULL`,
      [this.scope(companyId), uuids],
    )) as Array<{ id: string }>;
    return rows.map((r) => r.id);
  }

  /** The issue whose id (or upper-case identifier) is `value`, of any company unless `companyId` is given. */
  async findBy(column: 'id' | 'identifier', value: string, opts: { lock?: boolean; companyId?: string } = {}): Promise<IssueRow | null> {
    const params: unknown[] = [value];
    let sql = `SELECT ${ISSUE_COLUMNS} FROM issues WHERE ${column} = $1`;
    if (opts.companyId) {
      params.push(opts.companyId);
      sql += ` AND company_id = $2`;
    }
    if (opts.lock) sql += ' FOR UPDATE';
    const [row] = await this.db.query<IssueRow>(sql, params);
    return row ?? null;
  }

  /** Every visible issue of a company with its label names, by number (portability export). */
  allOfCompany(companyId: string, includeRoutineExecutions: boolean): Promise<Array<IssueRow & { label_names: string[] }>> {
    return this.rows<IssueRow & { label_names: string[] }>(
      companyId,
      `SELECT ${ISSUE_COLUMNS.split(',')
        .map((c) => `i.${c.trim()}`)
        .join(', ')},
              array(SELECT l.name FROM issue_labels il JOIN labels l ON l.id = il.label_id WHERE il.issue_id = i.id ORDER BY lower(l.name)) AS label_names
         FROM issues i WHERE i.company_id = $1 AND i.hidden_at IS NULL ${includeRoutineExecutions ? '' : `AND i.origin_kind <> 'routine_execution'`}
        ORDER BY i.issue_number`,
    );
  }

  /** Issues of the company among `ids` (any order). */
  findManyOfCompany(companyId: string, ids: string[]): Promise<IssueRow[]> {
    return this.rows<IssueRow>(companyId, `SELECT ${ISSUE_COLUMNS} FROM issues WHERE company_id = $1 AND id = ANY($2::uuid[])`, [ids]);
  }

  /** Labels and blocker ids of a page of issues, in one query. */
  async setsOf(issueIds: string[]): Promise<Map<string, IssueSets>> {
    // one issue (every single-issue answer) has its own statement: Postgres plans `unnest` of an array
    // parameter for 100 elements, so a generic plan never won against one for a single id and the
    // statement was planned anew on every request
    const rows =
      issueIds.length === 1
        ? await this.db.query<IssueSets & { id: string }>(`SELECT x.id, ${issueSetsSql('x')} FROM (SELECT $1::uuid AS id) AS x`, issueIds)
        : await this.db.query<IssueSets & { id: string }>(`SELECT x.id, ${issueSetsSql('x')} FROM unnest($1::uuid[]) AS x(id)`, [issueIds]);
    return new Map(rows.map((r) => [r.id, r]));
  }

  // ---- create and update

  /**
   * Inserts an issue numbered by the company's counter. One statement: the company row lock taken by
   * the counter UPDATE serialises concurrent creates until commit (numbers unique and gap-free).
   */
  async insertNumbered(companyId: string, changes: Record<string, unknown>): Promise<IssueRow> {
    // writes companies.issue_counter (owned by companies)
    const cols = Object.keys(changes);
    const [row] = await this.rows<IssueRow>(
      companyId,
      `WITH n AS (
         UPDATE companies SET issue_counter = issue_counter + 1 WHERE id = $1 RETURNING issue_prefix, issue_counter - 1 AS num)
       INSERT INTO issues (company_id, issue_number, identifier${cols.map((c) => `, ${c}`).join('')})
       SELECT $1, n.num, n.issue_prefix || '-' || n.num${cols.map((_, i) => `, $${i + 2}`).join('')} FROM n
       RETURNING ${ISSUE_COLUMNS}`,
      Object.values(changes),
    );
    return row;
  }

  /** Sets the given columns (and updated_at) of an issue. */
  async updateColumns(issueId: string, changes: Record<string, unknown>): Promise<IssueRow> {
    const keys = Object.keys(changes);
    const [row] = await returningRows<IssueRow>(
      this.db,
      `UPDATE issues SET ${[...keys.map((k, i) => `${k} = $${i + 2}`), 'updated_at = now()'].join(', ')}
          WHERE id = $1 RETURNING ${ISSUE_COLUMNS}`,
      [issueId, ...Object.values(changes)],
    );
    return row;
  }

  /** Takes `count` numbers of the company's issue counter at once; the first one and the prefix. */
  async reserveNumbers(companyId: string, count: number): Promise<{ issue_prefix: string; first: number }> {
    // writes companies.issue_counter (owned by companies)
    const [c] = await this.rows<{ issue_prefix: string; first: number }>(
      companyId,
      `WITH n AS (UPDATE companies SET issue_counter = issue_counter + $2::int WHERE id = $1 RETURNING issue_prefix, issue_counter - $2::int AS first)
       SELECT issue_prefix, first FROM n`,
      [count],
    );
    return c;
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
  async reopen(issueId: string): Promise<IssueRow> {
    const [row] = await returningRows<IssueRow>(
      this.db,
      `UPDATE issues SET status = 'todo', completed_at = NULL, cancelled_at = NULL, updated_at = now() WHERE id = $1 RETURNING ${ISSUE_COLUMNS}`,
      [issueId],
    );
    return row;
  }

  /** Bumps updated_at (a new comment). */
  async touch(issueId: string): Promise<void> {
    await this.db.query(`UPDATE issues SET updated_at = now() WHERE id = $1`, [issueId]);
  }

  // ---- checkout

  /** The conditional UPDATE of a checkout: the row when this caller won it, null when another did or the status differs. */
  async checkout(issueId: string, agentId: string, runId: string | null, expectedStatuses: string[]): Promise<IssueRow | null> {
    const [won] = await returningRows<IssueRow>(
      this.db,
      `UPDATE issues SET status = 'in_progress', assignee_agent_id = $2, checkout_run_id = $3,
              started_at = coalesce(started_at, now()), completed_at = NULL, cancelled_at = NULL, updated_at = now()
        WHERE id = $1 AND status = ANY($4::text[])
          AND (assignee_agent_id IS NULL OR assignee_agent_id = $2)
          AND (checkout_run_id IS NULL OR checkout_run_id IS NOT DISTINCT FROM $3::uuid OR ${CHECKOUT_RUN_STALE})
        RETURNING ${ISSUE_COLUMNS}`,
      [issueId, agentId, runId, expectedStatuses],
    );
    return won ?? null;
  }

  /** Back to todo without agent assignee or checkout run. */
  async releaseCheckout(issueId: string): Promise<IssueRow> {
    const [row] = await returningRows<IssueRow>(
      this.db,
      `UPDATE issues SET status = 'todo', assignee_agent_id = NULL, checkout_run_id = NULL, updated_at = now()
        WHERE id = $1 RETURNING ${ISSUE_COLUMNS}`,
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
  async adoptStaleCheckout(issueId: string, runId: string): Promise<boolean> {
    const [adopted] = await returningRows<{ id: string }>(
      this.db,
      `UPDATE issues SET checkout_run_id = $2 WHERE id = $1 AND (checkout_run_id IS NULL OR ${CHECKOUT_RUN_STALE}) RETURNING id`,
      [issueId, runId],
    );
    return !!adopted;
  }

  /** Status and checkout owner as they are now. */
  async checkoutState(issueId: string): Promise<Pick<IssueRow, 'status' | 'assignee_agent_id' | 'checkout_run_id'>> {
    const [now] = await this.db.query<IssueRow>(`SELECT status, assignee_agent_id, checkout_run_id FROM issues WHERE id = $1`, [issueId]);
    return now;
  }

  // ---- other domains' rows that issue rules read

  /** The status of an agent of the company, or null. */
  async agentStatus(companyId: string, agentId: string): Promise<{ status: string } | null> {
    // reads agents (owned by agents)
    const [agent] = await this.db.query<{ status: string }>(`SELECT status FROM agents WHERE id = $1 AND company_id = $2`, [
      agentId,
      this.scope(companyId),
    ]);
    return agent ?? null;
  }

  /** Whether the agent can be woken at all. */
  async isAgentWakeable(agentId: string): Promise<boolean> {
    // reads agents (owned by agents)
    return (await this.db.query(`SELECT 1 FROM agents WHERE id = $1 AND ${WAKEABLE}`, [agentId])).length > 0;
  }

  /** Wakeable agents of the company, longest name first (mention matching). */
  wakeableAgents(companyId: string): Promise<Array<{ id: string; name: string }>> {
    // reads agents (owned by agents)
    return this.rows<{ id: string; name: string }>(
      companyId,
      `SELECT id, name FROM agents WHERE company_id = $1 AND ${WAKEABLE} ORDER BY length(name) DESC`,
    );
  }

  /** When the project was paused (null when active); undefined for an unknown project. */
  async projectPause(projectId: string): Promise<{ paused_at: Date | null } | undefined> {
    // reads projects (owned by projects)
    const [p] = await this.db.query<{ paused_at: Date | null }>(`SELECT paused_at FROM projects WHERE id = $1`, [projectId]);
    return p;
  }

  /** Whether a project or goal of that id belongs to the company. */
  async existsInCompany(table: 'projects' | 'goals', companyId: string, id: string): Promise<boolean> {
    // reads projects / goals (owned by projects / goals)
    const rows = await this.db.query(`SELECT 1 FROM ${table} WHERE id = $1 AND company_id = $2`, [id, this.scope(companyId)]);
    return rows.length > 0;
  }

  async project(projectId: string): Promise<ProjectRow | null> {
    // reads projects (owned by projects), for the issue detail page
    const [p] = await this.db.query<ProjectRow>(
      `SELECT id, name, url_key, status, goal_id, color, paused_at, archived_at FROM projects WHERE id = $1`,
      [projectId],
    );
    return p ?? null;
  }

  /** Projects of the company among `ids`. */
  mentionedProjects(companyId: string, ids: string[]): Promise<ProjectRow[]> {
    // reads projects (owned by projects), for the issue detail page
    return this.rows<ProjectRow>(
      companyId,
      `SELECT id, name, url_key, status, goal_id, color, paused_at, archived_at FROM projects WHERE company_id = $1 AND id = ANY($2::uuid[])`,
      [ids],
    );
  }

  async goal(goalId: string): Promise<GoalRow | null> {
    // reads goals (owned by goals), for the issue detail page
    const [g] = await this.db.query<GoalRow>(`SELECT id, title, level, status, parent_id FROM goals WHERE id = $1`, [goalId]);
    return g ?? null;
  }

  /** The company's default goal: the flagged one when `flagged` (the column exists), else the oldest company-level goal. */
  async companyDefaultGoal(companyId: string, flagged: boolean): Promise<GoalRow | null> {
    // reads goals (owned by goals), for the issue detail page
    const preferFlag = flagged ? 'is_company_default DESC,' : '';
    const where = preferFlag ? `(is_company_default OR level = 'company')` : `level = 'company'`;
    return this.row<GoalRow>(
      companyId,
      `SELECT id, title, level, status, parent_id FROM goals WHERE company_id = $1 AND ${where} ORDER BY ${preferFlag} created_at, id LIMIT 1`,
    );
  }

  /** `goals.is_company_default` is added by the goals module; whether this database has it. */
  async hasDefaultGoalColumn(): Promise<boolean> {
    const r = await this.db.query(
      `SELECT 1 FROM information_schema.columns WHERE table_name = 'goals' AND column_name = 'is_company_default'`,
    );
    return r.length > 0;
  }

  // ---- trees and blockers (reads)

  /** The issue `parentId` and its parents up to the root, nearest first. */
  ancestors(parentId: string): Promise<IssueRow[]> {
    return this.db.query<IssueRow>(
      `WITH RECURSIVE up AS (
         SELECT i.*, 1 AS depth FROM issues i WHERE i.id = $1
         UNION ALL
         SELECT i.*, up.depth + 1 FROM issues i JOIN up ON i.id = up.parent_id WHERE up.depth < 100)
       SELECT ${issueColumns('up')} FROM up ORDER BY depth`,
      [parentId],
    );
  }

  /** The issues blocking this one (`blockedBy`) or blocked by it (`blocks`), oldest relation first. */
  related(issueId: string, dir: 'blockedBy' | 'blocks'): Promise<IssueRow[]> {
    const [mine, other] = dir === 'blockedBy' ? ['related_issue_id', 'issue_id'] : ['issue_id', 'related_issue_id'];
    return this.db.query<IssueRow>(
      `SELECT ${issueColumns('i')} FROM issue_relations r JOIN issues i ON i.id = r.${other}
        WHERE r.${mine} = $1 AND r.type = 'blocks' ORDER BY r.created_at, i.id`,
      [issueId],
    );
  }

  /** Open issues with an assignee agent that `closedId` blocked and that have no open blocker left. */
  unblockedBy(closedId: string): Promise<IssueRow[]> {
    return this.db.query<IssueRow>(
      `SELECT i.id, i.company_id, i.status, i.assignee_agent_id FROM issue_relations r JOIN issues i ON i.id = r.related_issue_id
        WHERE r.issue_id = $1 AND r.type = 'blocks' AND i.assignee_agent_id IS NOT NULL AND i.status NOT IN ('done', 'cancelled')
          AND NOT EXISTS (
            SELECT 1 FROM issue_relations o JOIN issues b ON b.id = o.issue_id
             WHERE o.related_issue_id = i.id AND o.type = 'blocks' AND b.status NOT IN ('done', 'cancelled'))`,
      [closedId],
    );
  }

  // ---- issues and heartbeat runs (reads heartbeat_runs and activity_log, owned by heartbeat and activity, for the issue pages)

  /** Heartbeat runs touching the issue, newest first (at most 200). */
  runsTouching(issueId: string): Promise<IssueRunRow[]> {
    return this.db.query<IssueRunRow>(
      `SELECT r.* FROM heartbeat_runs r, issues i
        WHERE i.id = $1 AND r.company_id = i.company_id AND ${RUN_TOUCHES_ISSUE}
        ORDER BY r.created_at DESC, r.id DESC LIMIT 200`,
      [issueId],
    );
  }

  /** The company of a heartbeat run, or null for an unknown run. */
  async runCompany(runId: string): Promise<string | null> {
    const [run] = await this.db.query<{ company_id: string }>(`SELECT company_id FROM heartbeat_runs WHERE id = $1`, [runId]);
    return run ? run.company_id : null;
  }

  /** The issues a run touched, most recently updated first. */
  touchedByRun(runId: string): Promise<IssueRow[]> {
    return this.db.query<IssueRow>(
      `SELECT ${issueColumns('i')} FROM heartbeat_runs r JOIN issues i ON i.company_id = r.company_id
        WHERE r.id = $1 AND (r.issue_id = i.id OR ${RUN_CONTEXT_NAMES_ISSUE} OR i.checkout_run_id = r.id
          OR i.id::text IN (SELECT a.entity_id FROM activity_log a WHERE a.run_id = r.id AND a.entity_type = 'issue'))
        ORDER BY i.updated_at DESC`,
      [runId],
    );
  }

  /** The agent's open assignments, priority first, with their live run and open blockers. */
  inboxLite(companyId: string, agentId: string): Promise<InboxLiteRow[]> {
    return this.db.query<InboxLiteRow>(
      `SELECT ${issueColumns('i')},
              coalesce((SELECT array_agg(b.id ORDER BY b.created_at, b.id) FROM issue_relations rel JOIN issues b ON b.id = rel.issue_id
                         WHERE rel.related_issue_id = i.id AND rel.type = 'blocks' AND b.status NOT IN ('done', 'cancelled')), '{}') AS blocker_ids,
              run.id AS run_id, run.status AS run_status, run.started_at AS run_started_at
         FROM issues i
         LEFT JOIN LATERAL (
           SELECT r.id, r.status, r.started_at FROM heartbeat_runs r
            WHERE r.agent_id = i.assignee_agent_id AND r.status IN ('queued', 'running')
              AND (r.id = i.checkout_run_id OR r.issue_id = i.id OR ${RUN_CONTEXT_NAMES_ISSUE})
            ORDER BY r.created_at DESC LIMIT 1) run ON true
        WHERE i.assignee_agent_id = $1 AND i.company_id = $2 AND i.status IN ('todo', 'in_progress', 'blocked') AND i.hidden_at IS NULL
        ORDER BY i.priority_rank, i.updated_at DESC, i.id`,
      [agentId, this.scope(companyId)],
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
  ): Promise<{ last_read_at: Date | null; inbox_archived_at: Date | null }> {
    const [row] = await this.db.query<{ last_read_at: Date | null; inbox_archived_at: Date | null }>(
      `INSERT INTO issue_user_states (issue_id, user_id, company_id, ${column}) VALUES ($1, $2, $3, ${value})
       ON CONFLICT (issue_id, user_id) DO UPDATE SET ${column} = ${value}
       RETURNING last_read_at, inbox_archived_at`,
      [issueId, userId, this.scope(companyId)],
    );
    return row;
  }
}
