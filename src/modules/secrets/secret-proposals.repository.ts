import { Injectable } from '@nestjs/common';
import { CompanyScopedRepository } from '../../database/company-scoped.repository';
import { Db } from '../../database/db.service';

export interface SecretProposalRecord {
  id: string;
  companyId: string;
  name: string;
  description: string | null;
  reason: string | null;
  status: 'pending' | 'approved' | 'rejected';
  proposedByAgentId: string | null;
  proposedByUserId: string | null;
  agentName: string | null;
  runId: string | null;
  issueId: string | null;
  hasValue: boolean;
  secretId: string | null;
  decidedByUserId: string | null;
  decisionNote: string | null;
  decidedAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

export interface ProposalValue {
  ciphertext: Buffer;
  iv: Buffer;
  authTag: Buffer;
  keyFingerprint: string;
}

/** Every column but the held value (its presence as `has_value`), with the proposing agent's name (a read of agents). */
const SELECT = `SELECT p.id, p.company_id AS "companyId", p.name, p.description, p.reason, p.status, p.proposed_by_agent_id AS "proposedByAgentId",
  p.proposed_by_user_id AS "proposedByUserId", a.name AS "agentName", p.run_id AS "runId", p.issue_id AS "issueId",
  p.ciphertext IS NOT NULL AS "hasValue", p.secret_id AS "secretId", p.decided_by_user_id AS "decidedByUserId",
  p.decision_note AS "decisionNote", p.decided_at AS "decidedAt", p.created_at AS "createdAt", p.updated_at AS "updatedAt"
  FROM secret_proposals p LEFT JOIN agents a ON a.id = p.proposed_by_agent_id AND a.company_id = p.company_id`;

/** secret_proposals: the held value is read only to create the secret, and wiped when the proposal is decided. */
@Injectable()
export class SecretProposalsRepository extends CompanyScopedRepository {
  constructor(db: Db) {
    super(db);
  }

  /** The new proposal's id, or null when a proposal of that name is pending already. */
  async insert(
    companyId: string,
    p: {
      id: string;
      name: string;
      description: string | null;
      reason: string | null;
      agentId: string | null;
      userId: string | null;
      runId: string | null;
      issueId: string | null;
      value: ProposalValue | null;
    },
  ): Promise<string | null> {
    const row = await this.row<{ id: string }>(
      companyId,
      `INSERT INTO secret_proposals (id, company_id, name, description, reason, proposed_by_agent_id, proposed_by_user_id, run_id, issue_id,
                                     ciphertext, iv, auth_tag, key_fingerprint)
       VALUES ($2, $1, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)
       ON CONFLICT (company_id, name) WHERE status = 'pending' DO NOTHING RETURNING id`,
      [
        p.id,
        p.name,
        p.description,
        p.reason,
        p.agentId,
        p.userId,
        p.runId,
        p.issueId,
        p.value?.ciphertext ?? null,
        p.value?.iv ?? null,
        p.value?.authTag ?? null,
        p.value?.keyFingerprint ?? null,
      ],
    );
    return row?.id ?? null;
  }

  list(companyId: string, status: string | null): Promise<SecretProposalRecord[]> {
    return this.rows(
      companyId,
      `${SELECT} WHERE p.company_id = $1 AND ($2::text IS NULL OR p.status = $2) ORDER BY p.created_at DESC, p.id`,
      [status],
    );
  }

  find(companyId: string, id: string): Promise<SecretProposalRecord | null> {
    return this.row(companyId, `${SELECT} WHERE p.company_id = $1 AND p.id = $2`, [id]);
  }

  /** Locks the proposal row; its held value, if any. */
  async lockValue(companyId: string, id: string): Promise<{ status: string; value: ProposalValue | null } | null> {
    const row = await this.row<ProposalValue & { status: string }>(
      companyId,
      `SELECT status, ciphertext, iv, auth_tag AS "authTag", key_fingerprint AS "keyFingerprint" FROM secret_proposals WHERE company_id = $1 AND id = $2 FOR UPDATE`,
      [id],
    );
    if (!row) return null;
    return { status: row.status, value: row.ciphertext ? row : null };
  }

  /** Decides a pending proposal and wipes its held value. */
  async decide(
    companyId: string,
    id: string,
    d: { status: 'approved' | 'rejected'; secretId: string | null; userId: string; note: string | null; name?: string },
  ): Promise<void> {
    await this.returning(
      companyId,
      `UPDATE secret_proposals SET status = $3, secret_id = $4, decided_by_user_id = $5, decision_note = $6, decided_at = now(), updated_at = now(),
              name = coalesce($7, name), ciphertext = NULL, iv = NULL, auth_tag = NULL, key_fingerprint = NULL
        WHERE company_id = $1 AND id = $2 AND status = 'pending' RETURNING id`,
      [id, d.status, d.secretId, d.userId, d.note, d.name ?? null],
    );
  }
}
