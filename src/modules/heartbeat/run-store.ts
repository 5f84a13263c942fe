import type { Actor } from '../../common/auth/actor';
import { ActivityRecorder } from '../../common/activity/activity-recorder.service';
import { Db } from '../../database/db.service';
import type { AgentRow, RunRow } from './heartbeat.types';

export const AGENT_COLUMNS = `id, company_id, name, role, title, capabilities, status, adapter_type, adapter_config, runtime_config, metadata,
  budget_monthly_cents, spent_monthly_cents`;

/** Statuses in which an agent may not run; a wake of such an agent is refused (route) or skipped. */
export const NOT_RUNNABLE_AGENT_STATUSES = ['paused', 'terminated', 'pending_approval'];

/**
 * The per-agent mutex of the engine: every change to an agent's wakes and runs first takes its
 * agent row lock (FOR NO KEY UPDATE: agent writers and other instances wait, run inserts do not),
 * always in the order agent row, then run rows, so no two writers deadlock.
 */
export async function lockAgent(db: Db, agentId: string): Promise<AgentRow | null> {
  const [row] = await db.query<AgentRow>(`SELECT ${AGENT_COLUMNS} FROM agents WHERE id = $1 FOR NO KEY UPDATE`, [agentId]);
  return row ?? null;
}

export async function loadRun(db: Db, runId: string): Promise<RunRow | null> {
  const [row] = await db.query<RunRow>('SELECT * FROM heartbeat_runs WHERE id = $1', [runId]);
  return row ?? null;
}

/** One activity record about a run (system actor unless given). */
export function recordRunActivity(
  recorder: ActivityRecorder,
  action: string,
  run: Pick<RunRow, 'id' | 'company_id' | 'agent_id'>,
  details: Record<string, unknown>,
  actor?: Actor,
) {
  return recorder.record({
    companyId: run.company_id,
    action,
    entityType: 'heartbeat_run',
    entityId: run.id,
    actor,
    agentId: run.agent_id,
    runId: run.id,
    details,
  });
}

/**
 * UPDATE ... RETURNING rows. TypeORM's postgres driver answers UPDATE/DELETE with
 * `[rows, rowCount]` rather than the rows, so normalise here.
 */
export async function updateReturning<T>(db: Db, sql: string, params: unknown[]): Promise<T[]> {
  const raw = (await db.query(sql, params)) as unknown;
  if (Array.isArray(raw) && raw.length === 2 && Array.isArray(raw[0]) && typeof raw[1] === 'number') return raw[0] as T[];
  return raw as T[];
}
