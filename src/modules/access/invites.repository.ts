import { Injectable } from '@nestjs/common';
import { CompanyScopedRepository } from '../../database/company-scoped.repository';
import { Db } from '../../database/db.service';
import { recordColumns } from '../../database/row-mapping';

export interface InviteRecord {
  id: string;
  companyId: string;
  tokenPrefix: string;
  role: string;
  allowedJoinTypes: 'human' | 'agent' | 'both';
  message: string | null;
  expiresAt: Date;
  revokedAt: Date | null;
  createdByUserId: string | null;
  createdByAgentId: string | null;
  createdAt: Date;
}

/** An invite with the name and email of the user who sent it. */
export interface InviteWithInviterRecord extends InviteRecord {
  inviterName: string | null;
  inviterEmail: string | null;
}

/** An invite with its company's public fields. */
export interface ResolvedInvite extends InviteRecord {
  companyName: string;
  companyDescription: string | null;
  companyLogoAssetId: string | null;
}

// every column but token_hash: the hash stays in the database
const INVITE_COLUMNS =
  'id, company_id, token_prefix, role, allowed_join_types, message, expires_at, revoked_at, created_by_user_id, created_by_agent_id, created_at';
const COLS = recordColumns(INVITE_COLUMNS);
const I_COLS = recordColumns(INVITE_COLUMNS, 'i');

export interface InviteInsert {
  tokenHash: string;
  tokenPrefix: string;
  role: string;
  allowedJoinTypes: string;
  message: string | null;
  expiresInHours: number;
  createdByUserId: string | null;
  createdByAgentId: string | null;
}

/** The only place the `invites` table is read and written. */
@Injectable()
export class InvitesRepository extends CompanyScopedRepository {
  constructor(db: Db) {
    super(db);
  }

  async insert(companyId: string, i: InviteInsert): Promise<InviteRecord> {
    const [row] = await this.rows<InviteRecord>(
      companyId,
      `INSERT INTO invites (company_id, token_hash, token_prefix, role, allowed_join_types, message, expires_at, created_by_user_id, created_by_agent_id)
       VALUES ($1, $2, $3, $4, $5, $6, now() + make_interval(hours => $7), $8, $9) RETURNING ${COLS}`,
      [i.tokenHash, i.tokenPrefix, i.role, i.allowedJoinTypes, i.message, i.expiresInHours, i.createdByUserId, i.createdByAgentId],
    );
    return row;
  }

  /** A page of the company's invites, newest first, with the name and email of the user who sent each (a read of users). */
  listPage(companyId: string, limit: number, offset: number): Promise<InviteWithInviterRecord[]> {
    return this.rows<InviteWithInviterRecord>(
      companyId,
      `SELECT ${I_COLS}, u.name AS "inviterName", u.email AS "inviterEmail"
         FROM invites i LEFT JOIN users u ON u.id = i.created_by_user_id
        WHERE i.company_id = $1 ORDER BY i.created_at DESC, i.id LIMIT $2 OFFSET $3`,
      [limit, offset],
    );
  }

  listByCompany(companyId: string): Promise<InviteRecord[]> {
    return this.rows<InviteRecord>(companyId, `SELECT ${COLS} FROM invites WHERE company_id = $1 ORDER BY created_at DESC, id`);
  }

  /** The company's invite by id, locked for update, or null. */
  lockInCompany(companyId: string, inviteId: string): Promise<InviteRecord | null> {
    return this.row<InviteRecord>(companyId, `SELECT ${COLS} FROM invites WHERE company_id = $1 AND id = $2 FOR UPDATE`, [inviteId]);
  }

  /** Revoking twice keeps the first revocation time. */
  async revoke(companyId: string, inviteId: string): Promise<InviteRecord> {
    const [row] = await this.returning<InviteRecord>(
      companyId,
      `UPDATE invites SET revoked_at = coalesce(revoked_at, now()) WHERE company_id = $1 AND id = $2 RETURNING ${COLS}`,
      [inviteId],
    );
    return row;
  }

  /** The invite behind a token hash with its company's public fields; `lock` locks the invite row. */
  findByTokenHash(tokenHash: string, lock: boolean): Promise<ResolvedInvite | null> {
    return this.unscopedRow<ResolvedInvite>(
      "a lookup by the invite token's hash (the token names the company), with the company's public fields (FOREIGN_READS)",
      `SELECT ${I_COLS}, c.name AS "companyName", c.description AS "companyDescription", c.logo_asset_id AS "companyLogoAssetId"
         FROM invites i JOIN companies c ON c.id = i.company_id WHERE i.token_hash = $1 ${lock ? 'FOR UPDATE OF i' : ''}`,
      [tokenHash],
    );
  }

  async roleOf(companyId: string, inviteId: string | null): Promise<string | undefined> {
    const invite = await this.row<{ role: string }>(companyId, `SELECT role FROM invites WHERE company_id = $1 AND id = $2`, [inviteId]);
    return invite?.role;
  }
}
