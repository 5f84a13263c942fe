import { Injectable } from '@nestjs/common';
import { CompanyScopedRepository } from '../../database/company-scoped.repository';
import { Db } from '../../database/db.service';

export interface RoutineRow {
  id: string;
  company_id: string;
  project_id: string | null;
  goal_id: string | null;
  parent_issue_id: string | null;
  folder_id: string | null;
  title: string;
  description: string | null;
  assignee_agent_id: string;
  priority: string;
  status: string;
  concurrency_policy: string;
  catch_up_policy: string;
  routine_key: string | null;
  managed_by: string | null;
  created_by_agent_id: string | null;
  created_by_user_id: string | null;
  updated_by_agent_id: string | null;
  updated_by_user_id: string | null;
  last_triggered_at: Date | null;
  last_enqueued_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

export interface TriggerRow {
  id: string;
  company_id: string;
  routine_id: string;
  kind: string;
  label: string | null;
  enabled: boolean;
  cron_expression: string | null;
  timezone: string | null;
  next_run_at: Date | null;
  last_fired_at: Date | null;
  last_result: string | null;
  created_by_agent_id: string | null;
  created_by_user_id: string | null;
  created_at: Date;
  updated_at: Date;
}

export interface RunRow {
  id: string;
  company_id: string;
  routine_id: string;
  trigger_id: string | null;
  source: string;
  status: string;
  triggered_at: Date;
  scheduled_for: Date | null;
  missed_count: number;
  trigger_payload: Record<string, unknown> | null;
  linked_issue_id: string | null;
  coalesced_into_run_id: string | null;
  failure_reason: string | null;
  created_at: Date;
  updated_at: Date;
  /** joined issue summary (issues are owned by the issues module; read here for the routines pages) */
  issue_identifier?: string | null;
  issue_title?: string | null;
  issue_status?: string | null;
  issue_priority?: string | null;
  issue_updated_at?: Date | null;
}

/** A trigger whose firing time has come, with what its firing needs. */
export interface DueTrigger {
  id: string;
  company_id: string;
  routine_id: string;
  cron_expression: string;
  timezone: string;
  next_run_at: Date;
  catch_up_policy: string;
}

export interface RunInsert {
  /** chosen by the caller when it sends the insert without waiting for it */
  id?: string;
  routineId: string;
  triggerId: string | null;
  source: 'schedule' | 'manual';
  status: 'issue_created' | 'skipped' | 'failed';
  scheduledFor: Date | null;
  missedCount: number;
  triggerPayload: Record<string, unknown> | null;
  linkedIssueId: string | null;
  coalescedIntoRunId: string | null;
  failureReason: string | null;
  createdByAgentId: string | null;
  createdByUserId: string | null;
}

const ROUTINE_COLUMNS = `id, company_id, project_id, goal_id, parent_issue_id, folder_id, title, description, assignee_agent_id, priority, status,
  concurrency_policy, catch_up_policy, routine_key, managed_by, created_by_agent_id, created_by_user_id, updated_by_agent_id,
  updated_by_user_id, last_triggered_at, last_enqueued_at, created_at, updated_at`;

// The runs pages show each execution's issue: a read joining the issues table for that page (the
// routines module serves it; issues stay written only by the issues module).
const RUN_SELECT = `SELECT rr.*, i.identifier AS issue_identifier, i.title AS issue_title, i.status AS issue_status,
                           i.priority AS issue_priority, i.updated_at AS issue_updated_at
                      FROM routine_runs rr LEFT JOIN issues i ON i.id = rr.linked_issue_id`;

/** The routines tables: routines, routine_triggers, routine_runs. */
@Injectable()
export class RoutinesRepository extends CompanyScopedRepository {
  constructor(db: Db) {
    super(db);
  }

  list(companyId: string): Promise<RoutineRow[]> {
    return this.rows<RoutineRow>(companyId, `SELECT ${ROUTINE_COLUMNS} FROM routines WHERE company_id = $1 ORDER BY created_at, id`);
  }

  /** One routine; `lock` serialises the firings and edits of that routine across instances. */
  get(companyId: string, routineId: string, lock = false): Promise<RoutineRow | null> {
    return this.row<RoutineRow>(
      companyId,
      `SELECT ${ROUTINE_COLUMNS} FROM routines WHERE company_id = $1 AND id = $2${lock ? ' FOR UPDATE' : ''}`,
      [routineId],
    );
  }

  byKey(companyId: string, routineKey: string): Promise<RoutineRow | null> {
    return this.row<RoutineRow>(companyId, `SELECT ${ROUTINE_COLUMNS} FROM routines WHERE company_id = $1 AND routine_key = $2`, [
      routineKey,
    ]);
  }

  async insert(companyId: string, values: Record<string, unknown>): Promise<RoutineRow> {
    const cols = Object.keys(values);
    const [row] = await this.rows<RoutineRow>(
      companyId,
      `INSERT INTO routines (company_id${cols.map((c) => `, ${c}`).join('')})
       VALUES ($1${cols.map((_, i) => `, $${i + 2}`).join('')}) RETURNING ${ROUTINE_COLUMNS}`,
      Object.values(values),
    );
    return row;
  }

  async update(companyId: string, routineId: string, values: Record<string, unknown>): Promise<RoutineRow> {
    const cols = Object.keys(values);
    const [row] = await this.returning<RoutineRow>(
      companyId,
      `UPDATE routines SET ${[...cols.map((c, i) => `${c} = $${i + 3}`), 'updated_at = now()'].join(', ')}
        WHERE company_id = $1 AND id = $2 RETURNING ${ROUTINE_COLUMNS}`,
      [routineId, ...Object.values(values)],
    );
    return row;
  }

  async remove(companyId: string, routineId: string): Promise<void> {
    await this.returning(companyId, `DELETE FROM routines WHERE company_id = $1 AND id = $2`, [routineId]);
  }

  /**
   * Which of the given references are not records of the company (a routine's placement and
   * assignee). One read across the owning tables, kept here because it serves the routines rules.
   */
  async foreignReferences(
    companyId: string,
    refs: { projectId?: string | null; goalId?: string | null; parentIssueId?: string | null; assigneeAgentId?: string | null },
  ): Promise<string[]> {
    const [r] = await this.rows<Record<string, boolean>>(
      companyId,
      `SELECT ($2::uuid IS NULL OR EXISTS (SELECT 1 FROM projects WHERE id = $2 AND company_id = $1)) AS "projectId",
              ($3::uuid IS NULL OR EXISTS (SELECT 1 FROM goals WHERE id = $3 AND company_id = $1)) AS "goalId",
              ($4::uuid IS NULL OR EXISTS (SELECT 1 FROM issues WHERE id = $4 AND company_id = $1)) AS "parentIssueId",
              ($5::uuid IS NULL OR EXISTS (SELECT 1 FROM agents WHERE id = $5 AND company_id = $1)) AS "assigneeAgentId"`,
      [refs.projectId ?? null, refs.goalId ?? null, refs.parentIssueId ?? null, refs.assigneeAgentId ?? null],
    );
    return Object.entries(r)
      .filter(([, ok]) => !ok)
      .map(([field]) => field);
  }

  /** What a firing checks first, in one round trip: the company's and the assignee's status. */
  async firingContext(companyId: string, agentId: string): Promise<{ companyStatus: string | null; agentStatus: string | null }> {
    const r = await this.row<{ company_status: string | null; agent_status: string | null }>(
      companyId,
      `SELECT (SELECT status FROM companies WHERE id = $1) AS company_status,
              (SELECT status FROM agents WHERE company_id = $1 AND id = $2) AS agent_status`,
      [agentId],
    );
    return { companyStatus: r?.company_status ?? null, agentStatus: r?.agent_status ?? null };
  }

  /** How many routines each folder holds (null: unfiled), for the folders sidebar. */
  folderCounts(companyId: string): Promise<Array<{ folderId: string | null; n: number }>> {
    return this.rows(
      companyId,
      `SELECT folder_id AS "folderId", count(*)::int AS n FROM routines WHERE company_id = $1 GROUP BY folder_id`,
    );
  }

  /** Files a routine in a folder (null: unfiled); false when the company has no such routine. */
  async setFolder(companyId: string, routineId: string, folderId: string | null): Promise<boolean> {
    const rows = await this.returning<{ id: string }>(
      companyId,
      `UPDATE routines SET folder_id = $3, updated_at = now() WHERE company_id = $1 AND id = $2 RETURNING id`,
      [routineId, folderId],
    );
    return rows.length > 0;
  }

  // ---- triggers

  triggersOf(companyId: string, routineIds: string[]): Promise<TriggerRow[]> {
    if (!routineIds.length) return Promise.resolve([]);
    return this.rows<TriggerRow>(
      companyId,
      `SELECT * FROM routine_triggers WHERE company_id = $1 AND routine_id = ANY($2::uuid[]) ORDER BY created_at, id`,
      [routineIds],
    );
  }

  trigger(companyId: string, triggerId: string, lock = false): Promise<TriggerRow | null> {
    return this.row<TriggerRow>(companyId, `SELECT * FROM routine_triggers WHERE company_id = $1 AND id = $2${lock ? ' FOR UPDATE' : ''}`, [
      triggerId,
    ]);
  }

  async insertTrigger(companyId: string, values: Record<string, unknown>): Promise<TriggerRow> {
    const cols = Object.keys(values);
    const [row] = await this.rows<TriggerRow>(
      companyId,
      `INSERT INTO routine_triggers (company_id${cols.map((c) => `, ${c}`).join('')})
       VALUES ($1${cols.map((_, i) => `, $${i + 2}`).join('')}) RETURNING *`,
      Object.values(values),
    );
    return row;
  }

  async updateTrigger(companyId: string, triggerId: string, values: Record<string, unknown>): Promise<TriggerRow> {
    const cols = Object.keys(values);
    const [row] = await this.returning<TriggerRow>(
      companyId,
      `UPDATE routine_triggers SET ${[...cols.map((c, i) => `${c} = $${i + 3}`), 'updated_at = now()'].join(', ')}
        WHERE company_id = $1 AND id = $2 RETURNING *`,
      [triggerId, ...Object.values(values)],
    );
    return row;
  }

  async removeTrigger(companyId: string, triggerId: string): Promise<void> {
    await this.returning(companyId, `DELETE FROM routine_triggers WHERE company_id = $1 AND id = $2`, [triggerId]);
  }

  /** Paused routine: none of its triggers is due any more. */
  async clearNextRuns(companyId: string, routineId: string): Promise<void> {
    await this.returning(
      companyId,
      `UPDATE routine_triggers SET next_run_at = NULL, updated_at = now() WHERE company_id = $1 AND routine_id = $2 AND next_run_at IS NOT NULL`,
      [routineId],
    );
  }

  // ---- runs

  async insertRun(companyId: string, r: RunInsert): Promise<RunRow> {
    const [row] = await this.rows<RunRow>(
      companyId,
      `INSERT INTO routine_runs (company_id, routine_id, trigger_id, source, status, scheduled_for, missed_count, trigger_payload,
                                 linked_issue_id, coalesced_into_run_id, failure_reason, created_by_agent_id, created_by_user_id, id)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, coalesce($14::uuid, gen_random_uuid())) RETURNING *`,
      [
        r.routineId,
        r.triggerId,
        r.source,
        r.status,
        r.scheduledFor,
        r.missedCount,
        r.triggerPayload ? JSON.stringify(r.triggerPayload) : null,
        r.linkedIssueId,
        r.coalescedIntoRunId,
        r.failureReason,
        r.createdByAgentId,
        r.createdByUserId,
        r.id ?? null,
      ],
    );
    return row;
  }

  async run(companyId: string, runId: string): Promise<RunRow | null> {
    return this.row<RunRow>(companyId, `${RUN_SELECT} WHERE rr.company_id = $1 AND rr.id = $2`, [runId]);
  }

  runsOf(companyId: string, routineId: string, limit: number): Promise<RunRow[]> {
    return this.rows<RunRow>(
      companyId,
      `${RUN_SELECT} WHERE rr.company_id = $1 AND rr.routine_id = $2 ORDER BY rr.created_at DESC, rr.id DESC LIMIT $3`,
      [routineId, limit],
    );
  }

  /** The latest execution of each routine. */
  lastRuns(companyId: string, routineIds: string[]): Promise<RunRow[]> {
    if (!routineIds.length) return Promise.resolve([]);
    return this.rows<RunRow>(
      companyId,
      `SELECT x.* FROM unnest($2::uuid[]) AS r(id)
         CROSS JOIN LATERAL (
           ${RUN_SELECT} WHERE rr.company_id = $1 AND rr.routine_id = r.id ORDER BY rr.created_at DESC, rr.id DESC LIMIT 1
         ) x`,
      [routineIds],
    );
  }

  /**
   * The latest execution per routine whose issue is still open (skip-while-open, and the
   * `activeIssue` of the routines pages). Reads issue status (issues module's table) for that rule.
   */
  openExecutions(companyId: string, routineIds: string[]): Promise<RunRow[]> {
    if (!routineIds.length) return Promise.resolve([]);
    return this.rows<RunRow>(
      companyId,
      `SELECT x.* FROM unnest($2::uuid[]) AS r(id)
         CROSS JOIN LATERAL (
           ${RUN_SELECT}
            WHERE rr.company_id = $1 AND rr.routine_id = r.id AND rr.linked_issue_id IS NOT NULL
              AND i.status NOT IN ('done', 'cancelled')
            ORDER BY rr.created_at DESC, rr.id DESC LIMIT 1
         ) x`,
      [routineIds],
    );
  }

  async noteFired(companyId: string, routineId: string, enqueued: boolean): Promise<void> {
    await this.returning(
      companyId,
      `UPDATE routines SET last_triggered_at = now()${enqueued ? ', last_enqueued_at = now()' : ''}, updated_at = now()
        WHERE company_id = $1 AND id = $2`,
      [routineId],
    );
  }

  // ---- the scheduler (across companies: it serves every tenant; each firing then runs company-scoped)

  /** Triggers due now, oldest first. Without locks: each is then claimed by a conditional update. */
  dueTriggers(limit: number, now: Date): Promise<DueTrigger[]> {
    return this.unscoped<DueTrigger>(
      "the scheduler's sweep of due triggers across companies (each firing then runs company-scoped)",
      `SELECT t.id, t.company_id, t.routine_id, t.cron_expression, t.timezone, t.next_run_at, r.catch_up_policy
         FROM (SELECT * FROM routine_triggers WHERE next_run_at <= $2 ORDER BY next_run_at LIMIT $1) t
         JOIN routines r ON r.id = t.routine_id AND r.company_id = t.company_id
        ORDER BY t.next_run_at`,
      [limit, now],
    );
  }

  /**
   * Claims one firing: moves next_run_at on only if it still holds the time this instance saw.
   * A concurrent claimer waits for the winner's commit, then finds the time moved and gets nothing.
   */
  async claim(companyId: string, triggerId: string, seenNextRunAt: Date, nextRunAt: Date | null, firedAt: Date): Promise<boolean> {
    const rows = await this.returning<{ id: string }>(
      companyId,
      `UPDATE routine_triggers SET next_run_at = $4, last_fired_at = $5, updated_at = now()
        WHERE company_id = $1 AND id = $2 AND next_run_at = $3 RETURNING id`,
      [triggerId, seenNextRunAt, nextRunAt, firedAt],
    );
    return rows.length > 0;
  }

  async setTriggerResult(companyId: string, triggerId: string, result: string): Promise<void> {
    await this.returning(companyId, `UPDATE routine_triggers SET last_result = $3 WHERE company_id = $1 AND id = $2`, [triggerId, result]);
  }

  /** Built-in agents: the routines one agent owns. */
  byManager(companyId: string, managedBy: string): Promise<RoutineRow[]> {
    return this.rows<RoutineRow>(
      companyId,
      `SELECT ${ROUTINE_COLUMNS} FROM routines WHERE company_id = $1 AND managed_by = $2 ORDER BY created_at`,
      [managedBy],
    );
  }
}
