import { Injectable } from '@nestjs/common';
import { Db } from '../../database/db.service';

export interface AgentKeyRow {
  key_id: string;
  agent_id: string;
  company_id: string;
  status: string;
  stale: boolean;
}

/**
 * The statements of the authentication hot path (every request): agent API keys, company existence,
 * live runs. The tables belong to their domain modules; common code cannot import them, so the reads
 * live here, each naming its owner.
 */
@Injectable()
export class AuthRepository {
  constructor(private readonly db: Db) {}

  /** An unrevoked agent API key by its SHA-256, with its agent's status (outside any request transaction). */
  // reads agent_api_keys and agents (owned by agents)
  async findAgentKey(tokenHash: string): Promise<AgentKeyRow | undefined> {
    const [row] = (await this.db.dataSource.query(
      `SELECT k.id AS key_id, k.agent_id, k.company_id, a.status,
              (k.last_used_at IS NULL OR k.last_used_at < now() - interval '1 minute') AS stale
         FROM agent_api_keys k JOIN agents a ON a.id = k.agent_id
        WHERE k.token_hash = $1 AND k.revoked_at IS NULL`,
      [tokenHash],
    )) as AgentKeyRow[];
    return row;
  }

  /** Marks a key used now, outside any request transaction. */
  // writes agent_api_keys (owned by agents)
  touchAgentKey(keyId: string): Promise<unknown> {
    return this.db.dataSource.query('UPDATE agent_api_keys SET last_used_at = now() WHERE id = $1', [keyId]);
  }

  // reads companies (owned by companies)
  async companyExists(companyId: string): Promise<boolean> {
    const rows = await this.db.query('SELECT 1 FROM companies WHERE id = $1', [companyId]);
    return rows.length > 0;
  }

  /** A run of the agent that is queued or running (outside any request transaction). */
  // reads heartbeat_runs (owned by heartbeat)
  async isLiveRun(runId: string, agentId: string): Promise<boolean> {
    const rows = await this.db.dataSource.query(
      `SELECT 1 FROM heartbeat_runs WHERE id = $1 AND agent_id = $2 AND status IN ('queued','running')`,
      [runId, agentId],
    );
    return rows.length > 0;
  }
}
