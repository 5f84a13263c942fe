import { Injectable } from '@nestjs/common';
import { CompanyScopedRepository } from '../../database/company-scoped.repository';
import { Db } from '../../database/db.service';

export interface InviteRow {
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

export interface ResolvedInvite extends InviteRow {
  company_name: string;
  company_description: string | null;
  company_logo_asset_id: string | null;
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

  async insert(companyId: string, i: InviteInsert): Promise<InviteRow> {
    const [row] = await this.rows<InviteRow>(
      companyId,
      `INSERT INTO invites (company_id, token_hash, token_prefix, role, allowed_join_types, message, expires_at, created_by_user_id, created_by_agent_id)
       VALUES ($1, $2, $3, $4, $5, $6, now() + make_interval(hours => $7), $8, $9) RETURNING *`,
      [i.tokenHash, i.tokenPrefix, i.role, i.allowedJoinTypes, i.message, i.expiresInHours, i.createdByUserId, i.createdByAgentId],
    );
    return row;
  }

  /** A page of the company's invites, newest first, with the name and email of the user who sent each (a read of users). */
  listPage(
    companyId: string,
    limit: number,
    offset: number,
  ): Promise<Array<InviteRow & { inviter_name: string | null; inviter_email: string | null }>> {
    return this.rows(
      companyId,
      `SELECT i.*, u.name AS inviter_name, u.email AS inviter_email
         FROM invites i LEFT JOIN users u ON u.id = i.created_by_user_id
        WHERE i.company_id = $1 ORDER BY i.created_at DESC, i.id LIMIT $2 OFFSET $3`,
      [limit, offset],
    );
  }

  listByCompany(companyId: string): Promise<InviteRow[]> {
    return this.rows<InviteRow>(companyId, `SELECT * FROM invites WHERE company_id = $1 ORDER BY created_at DESC, id`);
  }

  /** The company's invite by id, locked for update, or null. */
  lockInCompany(companyId: string, inviteId: string): Promise<InviteRow | null> {
    return this.row<InviteRow>(companyId, `SELECT * FROM invites WHERE company_id = $1 AND id = $2 FOR UPDATE`, [inviteId]);
  }

  /** Revoking twice keeps the first revocation time. */
  async revoke(companyId: string, inviteId: string): Promise<InviteRow> {
    const [row] = await this.returning<InviteRow>(
      companyId,
      `UPDATE invites SET revoked_at = coalesce(revoked_at, now()) WHERE company_id = $1 AND id = $2 RETURNING *`,
      [inviteId],
    );
    return row;
  }

  /** The invite behind a token hash with its company's public fields; `lock` locks the invite row. */
  findByTokenHash(tokenHash: string, lock: boolean): Promise<ResolvedInvite | null> {
    return this.unscopedRow<ResolvedInvite>(
      "a lookup by the invite token's hash (the token names the company), with the company's public fields (FOREIGN_READS)",
      `SELECT i.*, c.name AS company_name, c.description AS company_description, c.logo_asset_id AS company_logo_asset_id
         FROM invites i JOIN companies c ON c.id = i.company_id WHERE i.token_hash = $1 ${lock ? 'FOR UPDATE OF i' : ''}`,
      [tokenHash],
    );
  }

  async roleOf(companyId: string, inviteId: string | null): Promise<string | undefined> {
    const invite = await this.row<{ role: string }>(companyId, `SELECT role FROM invites WHERE company_id = $1 AND id = $2`, [inviteId]);
    return invite?.role;
  }
}
