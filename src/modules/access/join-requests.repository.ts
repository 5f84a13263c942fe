import { Injectable } from '@nestjs/common';
import { CompanyScopedRepository } from '../../database/company-scoped.repository';
import { Db } from '../../database/db.service';
import { recordColumns } from '../../database/row-mapping';

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

const COLS = recordColumns(
  'id, company_id, invite_id, request_type, status, requesting_user_id, agent_name, adapter_type, capabilities, claim_secret_hash, ' +
    'api_key_claimed_at, created_agent_id, decided_by_user_id, decided_at, decision_note, created_at, updated_at',
);

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
    const [row] = await this.rows<JoinRequestRecord>(
      companyId,
      `INSERT INTO join_requests (company_id, invite_id, request_type, agent_name, adapter_type, capabilities, claim_secret_hash)
       VALUES ($1, $2, 'agent', $3, $4, $5, $6) RETURNING ${COLS}`,
      [r.inviteId, r.agentName, r.adapterType, r.capabilities, r.claimSecretHash],
    );
    return row;
  }

  /** Newest first; null filters match everything. */
  list(companyId: string, status: string | null, requestType: string | null): Promise<JoinRequestRecord[]> {
    return this.rows<JoinRequestRecord>(
      companyId,
      `SELECT ${COLS} FROM join_requests WHERE company_id = $1 AND ($2::text IS NULL OR status = $2) AND ($3::text IS NULL OR request_type = $3)
        ORDER BY created_at DESC, id`,
      [status, requestType],
    );
  }

  async setCreatedAgent(companyId: string, requestId: string, agentId: string): Promise<JoinRequestRecord> {
    const [updated] = await this.returning<JoinRequestRecord>(
      companyId,
      `UPDATE join_requests SET created_agent_id = $3 WHERE company_id = $1 AND id = $2 RETURNING ${COLS}`,
      [requestId, agentId],
    );
    return updated;
  }

  /** A join request by id, locked for update. */
  lockById(requestId: string): Promise<JoinRequestRecord | null> {
    return this.unscopedRow<JoinRequestRecord>(
      'a join request of a route without :companyId (POST /api/join-requests/:requestId/claim-api-key, proven by its claim secret): its company is read here',
      `SELECT ${COLS} FROM join_requests WHERE id = $1 FOR UPDATE`,
      [requestId],
    );
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
    const [row] = await this.returning<JoinRequestRecord>(
      companyId,
      `UPDATE join_requests SET status = $3, decided_by_user_id = $4, decided_at = now(), decision_note = $5, updated_at = now()
        WHERE company_id = $1 AND id = $2 AND status = 'pending_approval' RETURNING ${COLS}`,
      [requestId, status, decidedByUserId, note],
    );
    return row;
  }

  async statusOf(companyId: string, requestId: string): Promise<string | undefined> {
    const existing = await this.row<{ status: string }>(companyId, `SELECT status FROM join_requests WHERE company_id = $1 AND id = $2`, [
      requestId,
    ]);
    return existing?.status;
  }
}
