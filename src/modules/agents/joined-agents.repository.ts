import { Injectable } from '@nestjs/common';
import { CompanyScopedRepository } from '../../database/company-scoped.repository';
import { Db } from '../../database/db.service';
import { AgentApiKeyEntity } from './agent-api-key.entity';

/** The agent an approved agent join request creates. */
export interface JoinedAgentInsert {
  name: string;
  urlKey: string;
  capabilities: string;
  adapterType: string;
  joinRequestId: string;
}

/** An agent API key as the claim answers it (never its hash). */
export interface JoinedAgentKey {
  id: string;
  agentId: string;
  companyId: string;
  name: string;
  createdAt: Date;
}

/** What join requests need of the agents tables (owned by agents). */
export interface JoinedAgentStore {
  /** The agent's status in the company, or undefined when it is not there. */
  status(companyId: string, agentId: string): Promise<string | undefined>;
  /** The new agent's id, or undefined when its URL key is taken in the company. */
  insertUnlessUrlKeyTaken(companyId: string, a: JoinedAgentInsert): Promise<string | undefined>;
  /** A new API key of the agent (only its hash and display prefix are stored). */
  insertApiKey(companyId: string, agentId: string, name: string, tokenHash: string, tokenPrefix: string): Promise<JoinedAgentKey>;
}

/**
 * The agents table as join requests (access) need it: an approved agent request creates its agent
 * and, once claimed, its first API key (access imports agents and calls it).
 */
@Injectable()
export class JoinedAgentsRepository extends CompanyScopedRepository implements JoinedAgentStore {
  constructor(db: Db) {
    super(db);
  }

  async status(companyId: string, agentId: string): Promise<string | undefined> {
    const agent = await this.row<{ status: string }>(companyId, `SELECT status FROM agents WHERE company_id = $1 AND id = $2`, [agentId]);
    return agent?.status;
  }

  async insertUnlessUrlKeyTaken(companyId: string, a: JoinedAgentInsert): Promise<string | undefined> {
    const rows = await this.rows<{ id: string }>(
      companyId,
      `INSERT INTO agents (company_id, name, url_key, role, title, capabilities, reports_to, adapter_type, adapter_config, runtime_config,
                           budget_monthly_cents, spent_monthly_cents, status, permissions, metadata)
       VALUES ($1, $2, $3, 'general', NULL, $4, NULL, $5, '{}'::jsonb, '{}'::jsonb, 0, 0, 'idle', '{}'::jsonb, $6::jsonb)
       ON CONFLICT DO NOTHING RETURNING id`,
      [a.name, a.urlKey, a.capabilities, a.adapterType, JSON.stringify({ joinRequestId: a.joinRequestId })],
    );
    return rows[0]?.id;
  }

  insertApiKey(companyId: string, agentId: string, name: string, tokenHash: string, tokenPrefix: string): Promise<JoinedAgentKey> {
    const repo = this.orm(AgentApiKeyEntity);
    return repo.save(repo.create({ companyId: this.scope(companyId), agentId, name, tokenHash, tokenPrefix }));
  }
}
