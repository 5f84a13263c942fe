import { Injectable } from '@nestjs/common';
import { CompanyScopedRepository } from '../../database/company-scoped.repository';
import { Db } from '../../database/db.service';
import { recordColumns } from '../../database/row-mapping';
import type { AgentRef, HeartbeatAgentStore, TimerAgentRecord } from '../heartbeat/heartbeat-agents.port';
import type { EngineAgentRecord } from '../heartbeat/heartbeat.types';

const ENGINE_COLUMNS = recordColumns(`id, company_id, name, role, title, capabilities, status, adapter_type, adapter_config, runtime_config,
  metadata, budget_monthly_cents, spent_monthly_cents`);

/**
 * The heartbeat engine's statements on the agents table (its per-agent lock, status flips of
 * claimed and ended runs, timer claims), registered with the engine's `HeartbeatAgents` port at
 * start-up (the agents module imports the heartbeat module, not the other way round).
 */
@Injectable()
export class AgentEngineRepository extends CompanyScopedRepository implements HeartbeatAgentStore {
  constructor(db: Db) {
    super(db);
  }

  lock(companyId: string, agentId: string): Promise<EngineAgentRecord | null> {
    return this.row<EngineAgentRecord>(
      companyId,
      `SELECT ${ENGINE_COLUMNS} FROM agents WHERE company_id = $1 AND id = $2 FOR NO KEY UPDATE`,
      [agentId],
    );
  }

  findForWake(companyId: string, agentId: string): Promise<(AgentRef & { status: string }) | null> {
    return this.row<AgentRef & { status: string }>(
      companyId,
      'SELECT id, company_id AS "companyId", status FROM agents WHERE company_id = $1 AND id = $2',
      [agentId],
    );
  }

  async markRunning(companyId: string, agentId: string): Promise<boolean> {
    const rows = await this.returning(
      companyId,
      `UPDATE agents SET status = 'running', updated_at = now()
        WHERE company_id = $1 AND id = $2 AND status IN ('idle','active','error') RETURNING status`,
      [agentId],
    );
    return rows.length > 0;
  }

  async settleIfRunning(companyId: string, agentId: string, status: 'idle' | 'error'): Promise<boolean> {
    const rows = await this.returning(
      companyId,
      `UPDATE agents SET status = $3, updated_at = now() WHERE company_id = $1 AND id = $2 AND status = 'running' RETURNING status`,
      [agentId, status],
    );
    return rows.length > 0;
  }

  claimDueTimers(): Promise<AgentRef[]> {
    return this.unscopedReturning<AgentRef>(
      "the timer sweep: claims due agents across companies (each wake then runs in the agent's company)",
      `UPDATE agents a SET heartbeat_last_fired_at = now()
           FROM (SELECT id FROM agents WHERE heartbeat_next_due_at <= now() ORDER BY heartbeat_next_due_at LIMIT 100 FOR NO KEY UPDATE SKIP LOCKED) d
          WHERE a.id = d.id RETURNING a.id, a.company_id AS "companyId"`,
    );
  }

  async claimOneDueTimer(skip: string[]): Promise<AgentRef | null> {
    const [row] = await this.unscopedReturning<AgentRef>(
      'the timer sweep, one agent at a time after a failed batch (across companies, like claimDueTimers)',
      `UPDATE agents a SET heartbeat_last_fired_at = now()
           FROM (SELECT id FROM agents WHERE heartbeat_next_due_at <= now() AND NOT (id = ANY($1::uuid[]))
                  ORDER BY heartbeat_next_due_at LIMIT 1 FOR NO KEY UPDATE SKIP LOCKED) d
          WHERE a.id = d.id RETURNING a.id, a.company_id AS "companyId"`,
      [skip],
    );
    return row ?? null;
  }

  timerAgents(companyIds: string[] | null): Promise<TimerAgentRecord[]> {
    return this.unscoped<TimerAgentRecord>(
      "the instance heartbeat page: agents of the companies the caller can access (all of them for an instance admin's null)",
      `SELECT ${recordColumns('id, company_id, name, status, runtime_config, heartbeat_next_due_at, heartbeat_last_fired_at', 'a')}
         FROM agents a
        WHERE a.status <> 'terminated' AND jsonb_typeof(a.runtime_config->'heartbeat') = 'object'
          AND a.runtime_config->'heartbeat'->>'enabled' = 'true'
          AND ($1::uuid[] IS NULL OR a.company_id = ANY($1::uuid[]))
        ORDER BY a.heartbeat_next_due_at NULLS LAST, a.id LIMIT 1000`,
      [companyIds],
    );
  }
}
