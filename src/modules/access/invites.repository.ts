import { Injectable } from '@nestjs/common';
import { CompanyScopedRepository } from '../../database/company-scoped.repository';
import { Db } from '../../database/db.service';

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

interface InviteRow {
  id: string;
  company_id: string;
  token_prefix: string;
  role: string;
  allowed_join_types: 'human' | 'agent' | 'both';
  message: string | null;
  expires_at: Date;
  revoked_at: Date | null;
  created_by_user_id: string | null;
  created_by_agent_id: string | null;
  created_at: Date;
}

function toRecord(r: InviteRow): InviteRecord {
  return {
    id: r.id,
    companyId: r.company_id,
    tokenPrefix: r.token_prefix,
    role: r.role,
    allowedJoinTypes: r.allowed_join_types,
    message: r.message,
    expiresAt: r.expires_at,
    revokedAt: r.revoked_at,
    createdByUserId: r.created_by_user_id,
    createdByAgentId: r.created_by_agent_id,
    createdAt: r.created_at,
  };
}

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
    const [row] = await this.rows<InviteRow>(
      companyId,
      `INSERT INTO invites (company_id, token_hash, token_prefix, role, allowed_join_types, message, expires_at, created_by_user_id, created_by_agent_id)
       VALUES ($1, $2, $3, $4, $5, $6, now() + make_interval(hours => $7), $8, $9) RETURNING *`,
      [i.tokenHash, i.tokenPrefix, i.role, i.allowedJoinTypes, i.message, i.expiresInHours, i.createdByUserId, i.createdByAgentId],
    );
    return toRecord(row);
  }

  /** A page of the company's invites, newest first, with the name and email of the user who sent each (a read of users). */
  async listPage(companyId: string, limit: number, offset: number): Promise<InviteWithInviterRecord[]> {
    const rows = await this.rows<InviteRow & { inviter_name: string | null; inviter_email: string | null }>(
      companyId,
      `SELECT i.*, u.name AS inviter_name, u.email AS inviter_email
         FROM invites i LEFT JOIN users u ON u.id = i.created_by_user_id
        WHERE i.company_id = $1 ORDER BY i.created_at DESC, i.id LIMIT $2 OFFSET $3`,
      [limit, offset],
    );
    return rows.map((r) => ({ ...toRecord(r), inviterName: r.inviter_name, inviterEmail: r.inviter_email }));
  }

  async listByCompany(companyId: string): Promise<InviteRecord[]> {
    const rows = await this.rows<InviteRow>(companyId, `SELECT * FROM invites WHERE company_id = $1 ORDER BY created_at DESC, id`);
    return rows.map(toRecord);
  }

  /** The company's invite by id, locked for update, or null. */
  async lockInCompany(companyId: string, inviteId: string): Promise<InviteRecord | null> {
    const row = await this.row<InviteRow>(companyId, `SELECT * FROM invites WHERE company_id = $1 AND id = $2 FOR UPDATE`, [inviteId]);
    return row ? toRecord(row) : null;
  }

  /** Revoking twice keeps the first revocation time. */
  async revoke(companyId: string, inviteId: string): Promise<InviteRecord> {
    const [row] = await this.returning<InviteRow>(
      companyId,
      `UPDATE invites SET revoked_at = coalesce(revoked_at, now()) WHERE company_id = $1 AND id = $2 RETURNING *`,
      [inviteId],
    );
    return toRecord(row);
  }

  /** The invite behind a token hash with its company's public fields; `lock` locks the invite row. */
  async findByTokenHash(tokenHash: string, lock: boolean): Promise<ResolvedInvite | null> {
    const row = await this.unscopedRow<
      InviteRow & { company_name: string; company_description: string | null; company_logo_asset_id: string | null }
    >(
      "a lookup by the invite token's hash (the token names the company), with the company's public fields (FOREIGN_READS)",
      `SELECT i.*, c.name AS company_name, c.description AS company_description, c.logo_asset_id AS company_logo_asset_id
         FROM invites i JOIN companies c ON c.id = i.company_id WHERE i.token_hash = $1 ${lock ? 'FOR UPDATE OF i' : ''}`,
      [tokenHash],
    );
    return row
      ? {
          ...toRecord(row),
          companyName: row.company_name,
          companyDescription: row.company_description,
          companyLogoAssetId: row.company_logo_asset_id,
        }
      : null;
  }

  async roleOf(companyId: string, inviteId: string | null): Promise<string | undefined> {
    const invite = await this.row<{ role: string }>(companyId, `SELECT role FROM invites WHERE company_id = $1 AND id = $2`, [inviteId]);
    return invite?.role;
  }
}
