import { Injectable } from '@nestjs/common';
import { CompanyScopedRepository } from '../../database/company-scoped.repository';
import { Db } from '../../database/db.service';
import { AgentApiKeyEntity } from '../agents/agent-api-key.entity';
import { AgentEntity } from '../agents/agent.entity';

export interface JoinRequestRow {
  id: string;
  company_id: string;
  invite_id: string | null;
  request_type: 'human' | 'agent';
  status: 'pending_approval' | 'approved' | 'rejected';
  requesting_user_id: string | null;
  agent_name: string | null;
  adapter_type: string | null;
  capabilities: string | null;
  claim_secret_hash: string | null;
  api_key_claimed_at: Date | null;
  created_agent_id: string | null;
  decided_by_user_id: string | null;
  decided_at: Date | null;
  decision_note: string | null;
  created_at: Date;
  updated_at: Date;
}

export interface AgentJoinRequestInsert {
  inviteId: string;
  agentName: string;
  adapterType: string | null;
  capabilities: string | null;
  claimSecretHash: string;
}

/** The agent row an approved join request creates (idle, no key yet). */
export interface JoinedAgentInsert {
  name: string;
  urlKey: string;
  capabilities: string;
  adapterType: string;
  joinRequestId: string;
}

/**
 * The only place the `join_requests` table is read and written. An approved agent request also
 * creates its agent and, once, its API key: those writes to the agents module's tables live here
 * (the agents module exports no method that creates them without its own authorization and activity).
 */
@Injectable()
export class JoinRequestsRepository extends CompanyScopedRepository {
  constructor(db: Db) {
    super(db);
  }

  async insertAgentRequest(companyId: string, r: AgentJoinRequestInsert): Promise<JoinRequestRow> {
    const [row] = await this.rows<JoinRequestRow>(
      companyId,
      `INSERT INTO join_requests (company_id, invite_id, request_type, agent_name, adapter_type, capabilities, claim_secret_hash)
       VALUES ($1, $2, 'agent', $3, $4, $5, $6) RETURNING *`,
      [r.inviteId, r.agentName, r.adapterType, r.capabilities, r.claimSecretHash],
    );
    return row;
  }

  /** Newest first; null filters match everything. */
  list(companyId: string, status: string | null, requestType: string | null): Promise<JoinRequestRow[]> {
    return this.rows<JoinRequestRow>(
      companyId,
      `SELECT * FROM join_requests WHERE company_id = $1 AND ($2::text IS NULL OR status = $2) AND ($3::text IS NULL OR request_type = $3)
        ORDER BY created_at DESC, id`,
      [status, requestType],
    );
  }

  async setCreatedAgent(requestId: string, agentId: string): Promise<JoinRequestRow> {
    const [updated] = await this.db.query<JoinRequestRow>(
      `WITH changed AS (UPDATE join_requests SET created_agent_id = $2 WHERE id = $1 RETURNING *) SELECT * FROM changed`,
      [requestId, agentId],
    );
    return updated;
  }

  /** A join request by id, locked for update. */
  async lockById(requestId: string): Promise<JoinRequestRow | undefined> {
    const [row] = await this.db.query<JoinRequestRow>(`SELECT * FROM join_requests WHERE id = $1 FOR UPDATE`, [requestId]);
    return row;
  }

  async markApiKeyClaimed(requestId: string): Promise<void> {
    await this.db.query(`UPDATE join_requests SET api_key_claimed_at = now(), updated_at = now() WHERE id = $1`, [requestId]);
  }

  /** Moves a pending request of the company to `status`; undefined when it is not pending (or not there). */
  async decidePending(
    companyId: string,
    requestId: string,
    status: 'approved' | 'rejected',
    decidedByUserId: string | null,
    note: string | null,
  ): Promise<JoinRequestRow | undefined> {
    const [row] = await this.db.query<JoinRequestRow>(
      `WITH changed AS (UPDATE join_requests SET status = $3, decided_by_user_id = $4, decided_at = now(), decision_note = $5, updated_at = now()
            WHERE id = $1 AND company_id = $2 AND status = 'pending_approval' RETURNING *) SELECT * FROM changed`,
      [requestId, this.scope(companyId), status, decidedByUserId, note],
    );
    return row;
  }

  async statusOf(companyId: string, requestId: string): Promise<string | undefined> {
    const [existing] = await this.db.query<{ status: string }>(`SELECT status FROM join_requests WHERE id = $1 AND company_id = $2`, [
      requestId,
      this.scope(companyId),
    ]);
    return existing?.status;
  }

  // reads agents (owned by agents)
  async agentStatus(agentId: string): Promise<string | undefined> {
    const [agent] = await this.db.query<{ status: string }>(`SELECT status FROM agents WHERE id = $1`, [agentId]);
    return agent?.status;
  }

  /** The new agent's id, or undefined when its URL key is taken in the company. */
  // writes agents (owned by agents)
  async insertAgentUnlessUrlKeyTaken(companyId: string, a: JoinedAgentInsert): Promise<string | undefined> {
    const result = await this.db.manager
      .createQueryBuilder()
      .insert()
      .into(AgentEntity)
      .values({
        companyId: this.scope(companyId),
        name: a.name,
        urlKey: a.urlKey,
        role: 'general',
        title: null,
        capabilities: a.capabilities,
        reportsTo: null,
        adapterType: a.adapterType,
        adapterConfig: {},
        runtimeConfig: {},
        budgetMonthlyCents: 0,
        spentMonthlyCents: 0,
        status: 'idle',
        permissions: {},
        metadata: { joinRequestId: a.joinRequestId },
      })
      .orIgnore()
      .returning(['id'])
      .execute();
    return (result.raw as Array<{ id: string }>)[0]?.id;
  }

  /** A new API key of the agent (only its hash and display prefix are stored). */
  // writes agent_api_keys (owned by agents)
  insertAgentApiKey(companyId: string, agentId: string, name: string, tokenHash: string, tokenPrefix: string): Promise<AgentApiKeyEntity> {
    const repo = this.db.repo(AgentApiKeyEntity);
    return repo.save(repo.create({ companyId: this.scope(companyId), agentId, name, tokenHash, tokenPrefix }));
  }
}
