import { Injectable } from '@nestjs/common';
import { CompanyScopedRepository } from '../../database/company-scoped.repository';
import { Db } from '../../database/db.service';
import { recordColumns, snakeName } from '../../database/row-mapping';

export interface RoutineRecord {
  id: string;
  companyId: string;
  projectId: string | null;
  goalId: string | null;
  parentIssueId: string | null;
  folderId: string | null;
  title: string;
  description: string | null;
  assigneeAgentId: string;
  priority: string;
  status: string;
  concurrencyPolicy: string;
  catchUpPolicy: string;
  routineKey: string | null;
  managedBy: string | null;
  createdByAgentId: string | null;
  createdByUserId: string | null;
  updatedByAgentId: string | null;
  updatedByUserId: string | null;
  lastTriggeredAt: Date | null;
  lastEnqueuedAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

export interface RoutineTriggerRecord {
  id: string;
  companyId: string;
  routineId: string;
  kind: string;
  label: string | null;
  enabled: boolean;
  cronExpression: string | null;
  timezone: string | null;
  nextRunAt: Date | null;
  lastFiredAt: Date | null;
  lastResult: string | null;
  createdByAgentId: string | null;
  createdByUserId: string | null;
  updatedByAgentId: string | null;
  updatedByUserId: string | null;
  createdAt: Date;
  updatedAt: Date;
}

export interface RoutineRunRecord {
  id: string;
  companyId: string;
  routineId: string;
  triggerId: string | null;
  source: string;
  status: string;
  triggeredAt: Date;
  scheduledFor: Date | null;
  missedCount: number;
  triggerPayload: Record<string, unknown> | null;
  linkedIssueId: string | null;
  coalescedIntoRunId: string | null;
  failureReason: string | null;
  createdByAgentId: string | null;
  createdByUserId: string | null;
  createdAt: Date;
  updatedAt: Date;
  /** joined issue summary (issues are owned by the issues module; read here for the routines pages) */
  issueIdentifier?: string | null;
  issueTitle?: string | null;
  issueStatus?: string | null;
  issuePriority?: string | null;
  issueUpdatedAt?: Date | null;
}

/** A trigger whose firing time has come, with what its firing needs. */
export interface DueTriggerRecord {
  id: string;
  companyId: string;
  routineId: string;
  cronExpression: string;
  timezone: string;
  nextRunAt: Date;
  catchUpPolicy: string;
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

const ROUTINE_COLUMNS =
  recordColumns(`id, company_id, project_id, goal_id, parent_issue_id, folder_id, title, description, assignee_agent_id, priority, status,
  concurrency_policy, catch_up_policy, routine_key, managed_by, created_by_agent_id, created_by_user_id, updated_by_agent_id,
  updated_by_user_id, last_triggered_at, last_enqueued_at, created_at, updated_at`);
const TRIGGER_COLUMNS =
  recordColumns(`id, company_id, routine_id, kind, label, enabled, cron_expression, timezone, next_run_at, last_fired_at,
  last_result, created_by_agent_id, created_by_user_id, updated_by_agent_id, updated_by_user_id, created_at, updated_at`);
const RUN_COLUMN_LIST = `id, company_id, routine_id, trigger_id, source, status, triggered_at, scheduled_for, missed_count, trigger_payload,
  linked_issue_id, coalesced_into_run_id, failure_reason, created_by_agent_id, created_by_user_id, created_at, updated_at`;

/** Values to write, by record field (the repository names the columns). */
export type RoutineFields = Partial<Record<keyof RoutineRecord, unknown>>;
export type TriggerFields = Partial<Record<keyof RoutineTriggerRecord, unknown>>;

/** Record fields as column names, for the inserts and updates (the fields are this module's, never a caller's input). */
const columnsOf = (values: RoutineFields | TriggerFields) => Object.keys(values).map(snakeName);

// The runs pages show each execution's issue: a read joining the issues table for that page (the
// routines module serves it; issues stay written only by the issues module).
const RUN_SELECT = `SELECT ${recordColumns(RUN_COLUMN_LIST, 'rr')}, i.identifier AS "issueIdentifier", i.title AS "issueTitle",
                           i.status AS "issueStatus", i.priority AS "issuePriority", i.updated_at AS "issueUpdatedAt"
                      FROM routine_runs rr LEFT JOIN issues i ON i.id = rr.linked_issue_id`;

/** The routines tables: routines, routine_triggers, routine_runs. */
@Injectable()
export class RoutinesRepository extends CompanyScopedRepository {
  constructor(db: Db) {
    super(db);
  }

  list(companyId: string): Promise<RoutineRecord[]> {
    return this.rows<RoutineRecord>(companyId, `SELECT ${ROUTINE_COLUMNS} FROM routines WHERE company_id = $1 ORDER BY created_at, id`);
  }

  /** One routine; `lock` serialises the firings and edits of that routine across instances. */
  get(companyId: string, routineId: string, lock = false): Promise<RoutineRecord | null> {
    return this.row<RoutineRecord>(
      companyId,
      `SELECT ${ROUTINE_COLUMNS} FROM routines WHERE company_id = $1 AND id = $2${lock ? ' FOR UPDATE' : ''}`,
      [routineId],
    );
  }

  byKey(companyId: string, routineKey: string): Promise<RoutineRecord | null> {
    return this.row<RoutineRecord>(companyId, `SELECT ${ROUTINE_COLUMNS} FROM routines WHERE company_id = $1 AND routine_key = $2`, [
      routineKey,
    ]);
  }

  async insert(companyId: string, values: RoutineFields): Promise<RoutineRecord> {
    const cols = columnsOf(values);
    const [row] = await this.rows<RoutineRecord>(
      companyId,
      `INSERT INTO routines (company_id${cols.map((c) => `, ${c}`).join('')})
       VALUES ($1${cols.map((_, i) => `, $${i + 2}`).join('')}) RETURNING ${ROUTINE_COLUMNS}`,
      Object.values(values),
    );
    return row;
  }

  async update(companyId: string, routineId: string, values: RoutineFields): Promise<RoutineRecord> {
    const cols = columnsOf(values);
    const [row] = await this.returning<RoutineRecord>(
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
    const r = await this.row<{ companyStatus: string | null; agentStatus: string | null }>(
      companyId,
      `SELECT (SELECT status FROM companies WHERE id = $1) AS "companyStatus",
              (SELECT status FROM agents WHERE company_id = $1 AND id = $2) AS "agentStatus"`,
      [agentId],
    );
    return { companyStatus: r?.companyStatus ?? null, agentStatus: r?.agentStatus ?? null };
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

  triggersOf(companyId: string, routineIds: string[]): Promise<RoutineTriggerRecord[]> {
    if (!routineIds.length) return Promise.resolve([]);
    return this.rows<RoutineTriggerRecord>(
      companyId,
      `SELECT ${TRIGGER_COLUMNS} FROM routine_triggers WHERE company_id = $1 AND routine_id = ANY($2::uuid[]) ORDER BY created_at, id`,
      [routineIds],
    );
  }

  trigger(companyId: string, triggerId: string, lock = false): Promise<RoutineTriggerRecord | null> {
    return this.row<RoutineTriggerRecord>(
      companyId,
      `SELECT ${TRIGGER_COLUMNS} FROM routine_triggers WHERE company_id = $1 AND id = $2${lock ? ' FOR UPDATE' : ''}`,
      [triggerId],
    );
  }

  async insertTrigger(companyId: string, values: TriggerFields): Promise<RoutineTriggerRecord> {
    const cols = columnsOf(values);
    const [row] = await this.rows<RoutineTriggerRecord>(
      companyId,
      `INSERT INTO routine_triggers (company_id${cols.map((c) => `, ${c}`).join('')})
       VALUES ($1${cols.map((_, i) => `, $${i + 2}`).join('')}) RETURNING ${TRIGGER_COLUMNS}`,
      Object.values(values),
    );
    return row;
  }

  async updateTrigger(companyId: string, triggerId: string, values: TriggerFields): Promise<RoutineTriggerRecord> {
    const cols = columnsOf(values);
    const [row] = await this.returning<RoutineTriggerRecord>(
      companyId,
      `UPDATE routine_triggers SET ${[...cols.map((c, i) => `${c} = $${i + 3}`), 'updated_at = now()'].join(', ')}
        WHERE company_id = $1 AND id = $2 RETURNING ${TRIGGER_COLUMNS}`,
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

  async insertRun(companyId: string, r: RunInsert): Promise<RoutineRunRecord> {
    const [row] = await this.rows<RoutineRunRecord>(
      companyId,
      `INSERT INTO routine_runs (company_id, routine_id, trigger_id, source, status, scheduled_for, missed_count, trigger_payload,
                                 linked_issue_id, coalesced_into_run_id, failure_reason, created_by_agent_id, created_by_user_id, id)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, coalesce($14::uuid, gen_random_uuid())) RETURNING ${recordColumns(RUN_COLUMN_LIST)}`,
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

  async run(companyId: string, runId: string): Promise<RoutineRunRecord | null> {
    return this.row<RoutineRunRecord>(companyId, `${RUN_SELECT} WHERE rr.company_id = $1 AND rr.id = $2`, [runId]);
  }

  runsOf(companyId: string, routineId: string, limit: number): Promise<RoutineRunRecord[]> {
    return this.rows<RoutineRunRecord>(
      companyId,
      `${RUN_SELECT} WHERE rr.company_id = $1 AND rr.routine_id = $2 ORDER BY rr.created_at DESC, rr.id DESC LIMIT $3`,
      [routineId, limit],
    );
  }

  /** The latest execution of each routine. */
  lastRuns(companyId: string, routineIds: string[]): Promise<RoutineRunRecord[]> {
    if (!routineIds.length) return Promise.resolve([]);
    return this.rows<RoutineRunRecord>(
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
  openExecutions(companyId: string, routineIds: string[]): Promise<RoutineRunRecord[]> {
    if (!routineIds.length) return Promise.resolve([]);
    return this.rows<RoutineRunRecord>(
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
  dueTriggers(limit: number, now: Date): Promise<DueTriggerRecord[]> {
    return this.unscoped<DueTriggerRecord>(
      "the scheduler's sweep of due triggers across companies (each firing then runs company-scoped)",
      `SELECT t.id, t.company_id AS "companyId", t.routine_id AS "routineId", t.cron_expression AS "cronExpression", t.timezone,
              t.next_run_at AS "nextRunAt", r.catch_up_policy AS "catchUpPolicy"
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
  byManager(companyId: string, managedBy: string): Promise<RoutineRecord[]> {
    return this.rows<RoutineRecord>(
      companyId,
      `SELECT ${ROUTINE_COLUMNS} FROM routines WHERE company_id = $1 AND managed_by = $2 ORDER BY created_at`,
      [managedBy],
    );
  }
}
