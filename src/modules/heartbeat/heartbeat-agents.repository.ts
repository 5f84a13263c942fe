import { Injectable } from '@nestjs/common';
import { returningRows } from '../../database/company-scoped.repository';
import { Db } from '../../database/db.service';
import type { AgentRow } from './heartbeat.types';

export const AGENT_COLUMNS = `id, company_id, name, role, title, capabilities, status, adapter_type, adapter_config, runtime_config, metadata,
  budget_monthly_cents, spent_monthly_cents`;

/** An agent with a timer and its latest run, for GET /api/instance/scheduler-heartbeats. */
export interface SchedulerHeartbeatRow {
  id: string;
  company_id: string;
  name: string;
  status: string;
  runtime_config: Record<string, unknown>;
  heartbeat_next_due_at: Date | null;
  heartbeat_last_fired_at: Date | null;
  run_id: string | null;
  run_status: string | null;
  invocation_source: string | null;
  run_created_at: Date | null;
  run_finished_at: Date | null;
}

/**
 * The engine's statements on tables other modules own: agents (owned by agents; the agents module
 * imports this one, so the engine keeps its agent lock, status flips and timer claims here),
 * companies (owned by companies) and issues (owned by issues). Engine-wide: keyed by agent id,
 * the company being the agent's own.
 */
@Injectable()
export class HeartbeatAgentsRepository {
  constructor(private readonly db: Db) {}

  /**
   * The per-agent mutex of the engine: every change to an agent's wakes and runs first takes its
   * agent row lock (FOR NO KEY UPDATE: agent writers and other instances wait, run inserts do not),
   * always in the order agent row, then run rows, so no two writers deadlock.
   */
  // reads agents (owned by agents)
  async lock(agentId: string): Promise<AgentRow | null> {
    const [row] = await this.db.query<AgentRow>(`SELECT ${AGENT_COLUMNS} FROM agents WHERE id = $1 FOR NO KEY UPDATE`, [agentId]);
    return row ?? null;
  }

  /** The agent a wakeup route names (any company). */
  // reads agents (owned by agents)
  async findForWake(agentId: string): Promise<{ id: string; company_id: string; status: string } | null> {
    const [agent] = await this.db.query<{ id: string; company_id: string; status: string }>(
      'SELECT id, company_id, status FROM agents WHERE id = $1',
      [agentId],
    );
    return agent ?? null;
  }

  /** A claimed run makes its agent `running` (from idle, active or error); the rows say whether it changed. */
  // writes agents.status (owned by agents)
  markRunning(agentId: string): Promise<unknown[]> {
    return returningRows(
      this.db,
      `UPDATE agents SET status = 'running', updated_at = now() WHERE id = $1 AND status IN ('idle','active','error') RETURNING status`,
      [agentId],
    );
  }

  /** An ended run leaves its agent `idle` or `error` once none of its runs is running; the rows say whether it changed. */
  // writes agents.status (owned by agents)
  settleAfterRun(agentId: string, status: 'idle' | 'error'): Promise<Array<{ status: string }>> {
    return returningRows<{ status: string }>(
      this.db,
      `UPDATE agents SET status = $2, updated_at = now()
          WHERE id = $1 AND status = 'running'
            AND NOT EXISTS (SELECT 1 FROM heartbeat_runs r WHERE r.agent_id = $1 AND r.status = 'running')
          RETURNING status`,
      [agentId, status],
    );
  }

  /** Claims agents whose timer is due (skipping rows another instance holds), marking them fired. */
  // writes agents.heartbeat_last_fired_at (owned by agents)
  claimDueTimers(): Promise<Array<{ id: string; company_id: string }>> {
    return returningRows<{ id: string; company_id: string }>(
      this.db,
      `UPDATE agents a SET heartbeat_last_fired_at = now()
           FROM (SELECT id FROM agents WHERE heartbeat_next_due_at <= now() ORDER BY heartbeat_next_due_at LIMIT 100 FOR NO KEY UPDATE SKIP LOCKED) d
          WHERE a.id = d.id RETURNING a.id, a.company_id`,
      [],
    );
  }

  /**
   * One due agent not among `skip` (the one-by-one path after a failed batch): the same claim as
   * claimDueTimers for a single row, so each agent's wake commits or fails on its own.
   */
  async claimOneDueTimer(skip: string[]): Promise<{ id: string; company_id: string } | null> {
    const [row] = await returningRows<{ id: string; company_id: string }>(
      this.db,
      `UPDATE agents a SET heartbeat_last_fired_at = now()
           FROM (SELECT id FROM agents WHERE heartbeat_next_due_at <= now() AND NOT (id = ANY($1::uuid[]))
                  ORDER BY heartbeat_next_due_at LIMIT 1 FOR NO KEY UPDATE SKIP LOCKED) d
          WHERE a.id = d.id RETURNING a.id, a.company_id`,
      [skip],
    );
    return row ?? null;
  }

  /** Agents with an enabled timer (in the given companies, or all for null) and their latest run. */
  // reads agents (owned by agents) for the heartbeat page
  schedulerHeartbeats(companyIds: string[] | null): Promise<SchedulerHeartbeatRow[]> {
    return this.db.query<SchedulerHeartbeatRow>(
      `SELECT a.id, a.company_id, a.name, a.status, a.runtime_config, a.heartbeat_next_due_at, a.heartbeat_last_fired_at,
              lr.id AS run_id, lr.status AS run_status, lr.invocation_source, lr.created_at AS run_created_at, lr.finished_at AS run_finished_at
         FROM agents a
         LEFT JOIN LATERAL (SELECT * FROM heartbeat_runs r WHERE r.agent_id = a.id ORDER BY r.created_at DESC LIMIT 1) lr ON true
        WHERE a.status <> 'terminated' AND jsonb_typeof(a.runtime_config->'heartbeat') = 'object'
          AND a.runtime_config->'heartbeat'->>'enabled' = 'true'
          AND ($1::uuid[] IS NULL OR a.company_id = ANY($1::uuid[]))
        ORDER BY a.heartbeat_next_due_at NULLS LAST, a.id LIMIT 1000`,
      [companyIds],
    );
  }

  /** The company's status and whether it is over its monthly budget (null if it is gone). */
  // reads companies (owned by companies)
  async companyRunGate(companyId: string): Promise<{ status: string; over: boolean } | null> {
    const [co] = await this.db.query<{ status: string; over: boolean }>(
      `SELECT status, budget_monthly_cents > 0 AND spent_monthly_cents >= budget_monthly_cents AS over FROM companies WHERE id = $1`,
      [companyId],
    );
    return co ?? null;
  }

  /** Whether the issues table exists (the engine runs without the issues module in some set-ups). */
  async issuesTableExists(): Promise<boolean> {
    const [t] = await this.db.query<{ exists: boolean }>(`SELECT to_regclass('public.issues') IS NOT NULL AS exists`);
    return !!t?.exists;
  }

  /** Whether the agent has an assigned todo/in_progress issue. */
  // reads issues (owned by issues)
  async hasOpenAssignedIssue(companyId: string, agentId: string): Promise<boolean> {
    const rows = await this.db.query(
      `SELECT 1 FROM issues i WHERE i.company_id = $1 AND to_jsonb(i)->>'assignee_agent_id' = $2
          AND to_jsonb(i)->>'status' IN ('todo','in_progress') LIMIT 1`,
      [companyId, agentId],
    );
    return rows.length > 0;
  }
}
