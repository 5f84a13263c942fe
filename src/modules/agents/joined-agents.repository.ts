import { Injectable, OnModuleInit } from '@nestjs/common';
import { CompanyScopedRepository } from '../../database/company-scoped.repository';
import { Db } from '../../database/db.service';
import { JoinedAgentInsert, JoinedAgentKey, JoinedAgents, JoinedAgentStore } from '../access/joined-agents.port';
import { AgentApiKeyEntity } from './agent-api-key.entity';

/**
 * The agents table as join requests (access) need it: an approved agent request creates its agent
 * and, once claimed, its first API key. Registered with access's `JoinedAgents` port at start-up.
 */
@Injectable()
export class JoinedAgentsRepository extends CompanyScopedRepository implements JoinedAgentStore, OnModuleInit {
  constructor(
    db: Db,
    private readonly port: JoinedAgents,
  ) {
    super(db);
  }

  onModuleInit(): void {
    this.port.register(this);
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
