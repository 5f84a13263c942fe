import { Injectable } from '@nestjs/common';
import { CompanyScopedRepository } from '../../database/company-scoped.repository';
import { Db } from '../../database/db.service';

interface JoinRequestRow {
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

export interface JoinRequestRecord {
  id: string;
  companyId: string;
  inviteId: string | null;
  requestType: 'human' | 'agent';
  status: 'pending_approval' | 'approved' | 'rejected';
  requestingUserId: string | null;
  agentName: string | null;
  adapterType: string | null;
  capabilities: string | null;
  claimSecretHash: string | null;
  apiKeyClaimedAt: Date | null;
  createdAgentId: string | null;
  decidedByUserId: string | null;
  decidedAt: Date | null;
  decisionNote: string | null;
  createdAt: Date;
  updatedAt: Date;
}

function toRecord(r: JoinRequestRow): JoinRequestRecord {
  return {
    id: r.id,
    companyId: r.company_id,
    inviteId: r.invite_id,
    requestType: r.request_type,
    status: r.status,
    requestingUserId: r.requesting_user_id,
    agentName: r.agent_name,
    adapterType: r.adapter_type,
    capabilities: r.capabilities,
    claimSecretHash: r.claim_secret_hash,
    apiKeyClaimedAt: r.api_key_claimed_at,
    createdAgentId: r.created_agent_id,
    decidedByUserId: r.decided_by_user_id,
    decidedAt: r.decided_at,
    decisionNote: r.decision_note,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

export interface AgentJoinRequestInsert {
  inviteId: string;
  agentName: string;
  adapterType: string | null;
  capabilities: string | null;
  claimSecretHash: string;
}

/**
 * The only place the `join_requests` table is read and written. The agent an approved agent
 * request creates, and its key, are written by the agents module (`JoinedAgentsRepository`).
 */
@Injectable()
export class JoinRequestsRepository extends CompanyScopedRepository {
  constructor(db: Db) {
    super(db);
  }

  async insertAgentRequest(companyId: string, r: AgentJoinRequestInsert): Promise<JoinRequestRecord> {
    const [row] = await this.rows<JoinRequestRow>(
      companyId,
      `INSERT INTO join_requests (company_id, invite_id, request_type, agent_name, adapter_type, capabilities, claim_secret_hash)
       VALUES ($1, $2, 'agent', $3, $4, $5, $6) RETURNING *`,
      [r.inviteId, r.agentName, r.adapterType, r.capabilities, r.claimSecretHash],
    );
    return toRecord(row);
  }

  /** Newest first; null filters match everything. */
  async list(companyId: string, status: string | null, requestType: string | null): Promise<JoinRequestRecord[]> {
    const rows = await this.rows<JoinRequestRow>(
      companyId,
      `SELECT * FROM join_requests WHERE company_id = $1 AND ($2::text IS NULL OR status = $2) AND ($3::text IS NULL OR request_type = $3)
        ORDER BY created_at DESC, id`,
      [status, requestType],
    );
    return rows.map(toRecord);
  }

  async setCreatedAgent(companyId: string, requestId: string, agentId: string): Promise<JoinRequestRecord> {
    const [updated] = await this.returning<JoinRequestRow>(
      companyId,
      `UPDATE join_requests SET created_agent_id = $3 WHERE company_id = $1 AND id = $2 RETURNING *`,
      [requestId, agentId],
    );
    return toRecord(updated);
  }

  /** A join request by id, locked for update. */
  async lockById(requestId: string): Promise<JoinRequestRecord | null> {
    const row = await this.unscopedRow<JoinRequestRow>(
      'a join request of a route without :companyId (POST /api/join-requests/:requestId/claim-api-key, proven by its claim secret): its company is read here',
      `SELECT * FROM join_requests WHERE id = $1 FOR UPDATE`,
      [requestId],
    );
    return row ? toRecord(row) : null;
  }

  async markApiKeyClaimed(companyId: string, requestId: string): Promise<void> {
    await this.rows(
      companyId,
      `UPDATE join_requests SET api_key_claimed_at = now(), updated_at = now() WHERE company_id = $1 AND id = $2`,
      [requestId],
    );
  }

  /** Moves a pending request of the company to `status`; undefined when it is not pending (or not there). */
  async decidePending(
    companyId: string,
    requestId: string,
    status: 'approved' | 'rejected',
    decidedByUserId: string | null,
    note: string | null,
  ): Promise<JoinRequestRecord | undefined> {
    const [row] = await this.returning<JoinRequestRow>(
      companyId,
      `UPDATE join_requests SET status = $3, decided_by_user_id = $4, decided_at = now(), decision_note = $5, updated_at = now()
        WHERE company_id = $1 AND id = $2 AND status = 'pending_approval' RETURNING *`,
      [requestId, status, decidedByUserId, note],
    );
    return row ? toRecord(row) : undefined;
  }

  async statusOf(companyId: string, requestId: string): Promise<string | undefined> {
    const existing = await this.row<{ status: string }>(companyId, `SELECT status FROM join_requests WHERE company_id = $1 AND id = $2`, [
      requestId,
    ]);
    return existing?.status;
  }
}
