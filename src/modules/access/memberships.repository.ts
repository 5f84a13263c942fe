import { Injectable } from '@nestjs/common';
import { CompanyScopedRepository } from '../../database/company-scoped.repository';
import { Db } from '../../database/db.service';
import { recordColumns } from '../../database/row-mapping';
import type { MembershipRole, MembershipStatus, NormalizedGrant } from './permission-keys';

export type PrincipalType = 'user' | 'agent';

export interface MembershipRecord {
  id: string;
  companyId: string;
  principalType: PrincipalType;
  principalId: string;
  membershipRole: MembershipRole;
  status: MembershipStatus;
  createdAt: Date;
  updatedAt: Date;
}

/** A membership with its principal's user or agent. */
export interface MemberDetailRecord extends MembershipRecord {
  userName: string | null;
  userEmail: string | null;
  userSlug: string | null;
  userImage: string | null;
  agentName: string | null;
  agentStatus: string | null;
}

export interface GrantRecord {
  principalType: string;
  principalId: string;
  permissionKey: NormalizedGrant['permissionKey'];
  scope: NormalizedGrant['scope'];
}

export interface DirectoryRecord {
  id: string;
  name: string;
  slug: string;
  image: string | null;
  membershipRole: string;
  status: string;
}

/** company_memberships' columns, as MembershipRecord's fields by recordColumns. */
export const MEMBERSHIP_COLUMNS = 'id, company_id, principal_type, principal_id, membership_role, status, created_at, updated_at';
const COLS = recordColumns(MEMBERSHIP_COLUMNS);

// the members pages show each principal's user or agent: a read joining users (owned by users)
// and agents (owned by agents) for those pages (FOREIGN_READS)
const MEMBER_SELECT = `
  SELECT ${recordColumns(MEMBERSHIP_COLUMNS, 'm')}, u.name AS "userName", u.email AS "userEmail", u.slug AS "userSlug",
         u.image AS "userImage", a.name AS "agentName", a.status AS "agentStatus"
    FROM company_memberships m
    LEFT JOIN users u ON m.principal_type = 'user' AND u.id = m.principal_id
    LEFT JOIN agents a ON m.principal_type = 'agent' AND a.id::text = m.principal_id`;

/** The only place `company_memberships` and `principal_permission_grants` are read and written (by the access area). */
@Injectable()
export class MembershipsRepository extends CompanyScopedRepository {
  constructor(db: Db) {
    super(db);
  }

  listDetailed(companyId: string): Promise<MemberDetailRecord[]> {
    return this.rows<MemberDetailRecord>(companyId, `${MEMBER_SELECT} WHERE m.company_id = $1 ORDER BY m.created_at, m.id`);
  }

  getDetailed(companyId: string, memberId: string): Promise<MemberDetailRecord[]> {
    return this.rows<MemberDetailRecord>(companyId, `${MEMBER_SELECT} WHERE m.company_id = $1 AND m.id = $2`, [memberId]);
  }

  /** The grants of the given principals (pairs of `types[i]`, `ids[i]`) in the company. */
  grantsOf(companyId: string, types: string[], ids: string[]): Promise<GrantRecord[]> {
    return this.rows<GrantRecord>(
      companyId,
      `SELECT principal_type AS "principalType", principal_id AS "principalId", permission_key AS "permissionKey", scope FROM principal_permission_grants
        WHERE company_id = $1 AND (principal_type, principal_id) IN (SELECT * FROM unnest($2::text[], $3::text[]))
        ORDER BY permission_key, created_at`,
      [types, ids],
    );
  }

  find(companyId: string, type: PrincipalType, principalId: string): Promise<MembershipRecord | null> {
    return this.row<MembershipRecord>(
      companyId,
      `SELECT ${COLS} FROM company_memberships WHERE company_id = $1 AND principal_type = $2 AND principal_id = $3`,
      [type, principalId],
    );
  }

  /** Inserts an active membership or reactivates the existing one with the role; `inserted` tells which. */
  async upsertActive(
    companyId: string,
    type: PrincipalType,
    principalId: string,
    role: MembershipRole,
  ): Promise<MembershipRecord & { inserted: boolean }> {
    const [row] = await this.rows<MembershipRecord & { inserted: boolean }>(
      companyId,
      `INSERT INTO company_memberships (company_id, principal_type, principal_id, membership_role, status)
       VALUES ($1, $2, $3, $4, 'active')
       ON CONFLICT (company_id, principal_type, principal_id)
       DO UPDATE SET membership_role = EXCLUDED.membership_role, status = 'active', updated_at = now()
       RETURNING ${COLS}, (xmax = 0) AS inserted`,
      [type, principalId, role],
    );
    return row;
  }

  async setRoleAndStatus(companyId: string, membershipId: string, role: MembershipRole, status: MembershipStatus): Promise<void> {
    await this.rows(
      companyId,
      `UPDATE company_memberships SET membership_role = $3, status = $4, updated_at = now() WHERE company_id = $1 AND id = $2`,
      [membershipId, role, status],
    );
  }

  async deactivate(companyId: string, membershipId: string): Promise<void> {
    await this.rows(companyId, `UPDATE company_memberships SET status = 'inactive', updated_at = now() WHERE company_id = $1 AND id = $2`, [
      membershipId,
    ]);
  }

  async activateWithRole(companyId: string, membershipId: string, role: MembershipRole): Promise<void> {
    await this.rows(
      companyId,
      `UPDATE company_memberships SET membership_role = $3, status = 'active', updated_at = now() WHERE company_id = $1 AND id = $2`,
      [membershipId, role],
    );
  }

  async deleteGrants(companyId: string, type: PrincipalType, principalId: string): Promise<void> {
    await this.rows(
      companyId,
      `DELETE FROM principal_permission_grants WHERE company_id = $1 AND principal_type = $2 AND principal_id = $3`,
      [type, principalId],
    );
  }

  async insertGrants(
    companyId: string,
    type: PrincipalType,
    principalId: string,
    grants: NormalizedGrant[],
    grantedBy: string,
  ): Promise<void> {
    await this.rows(
      companyId,
      `INSERT INTO principal_permission_grants (company_id, principal_type, principal_id, permission_key, scope, granted_by)
       SELECT $1, $2, $3, g.key, g.scope, $6 FROM unnest($4::text[], $5::jsonb[]) AS g(key, scope)`,
      [type, principalId, grants.map((g) => g.permissionKey), grants.map((g) => (g.scope ? JSON.stringify(g.scope) : null)), grantedBy],
    );
  }

  /** Memberships (any status) of a user across companies, with the company's name. */
  companiesOfUser(userId: string): Promise<Array<MembershipRecord & { companyName: string }>> {
    return this.unscoped<MembershipRecord & { companyName: string }>(
      "a user's memberships across companies (instance user administration), with each company's name (FOREIGN_READS)",
      `SELECT ${recordColumns(MEMBERSHIP_COLUMNS, 'm')}, c.name AS "companyName" FROM company_memberships m JOIN companies c ON c.id = m.company_id
        WHERE m.principal_type = 'user' AND m.principal_id = $1 ORDER BY c.name, c.id`,
      [userId],
    );
  }

  /** Companies where the user has a membership of any status. */
  async companyIdsOfUser(userId: string): Promise<string[]> {
    const rows = await this.unscoped<{ companyId: string }>(
      "a user's memberships across companies (instance user administration)",
      `SELECT company_id AS "companyId" FROM company_memberships WHERE principal_type = 'user' AND principal_id = $1`,
      [userId],
    );
    return rows.map((r) => r.companyId);
  }

  /** Every membership of the user, locked for update (in company order). */
  lockAllOfUser(userId: string): Promise<MembershipRecord[]> {
    return this.unscoped<MembershipRecord>(
      "a user's memberships across companies, locked to replace their company access (instance user administration)",
      `SELECT ${COLS} FROM company_memberships WHERE principal_type = 'user' AND principal_id = $1 ORDER BY company_id FOR UPDATE`,
      [userId],
    );
  }

  async activeCompanyIdsOfUser(userId: string): Promise<string[]> {
    const rows = await this.unscoped<{ companyId: string }>(
      'the companies a signed-in user is an active member of (their access, across companies)',
      `SELECT company_id AS "companyId" FROM company_memberships WHERE principal_type = 'user' AND principal_id = $1 AND status = 'active'`,
      [userId],
    );
    return rows.map((r) => r.companyId);
  }

  /** Role and status changes of a company's members take turns: a transaction-scoped advisory lock. */
  async lockMembersOf(companyId: string): Promise<void> {
    await this.rows(companyId, `SELECT pg_advisory_xact_lock(hashtextextended('company_members:' || $1, 0))`);
  }

  lockMember(companyId: string, memberId: string): Promise<MembershipRecord | null> {
    return this.row<MembershipRecord>(companyId, `SELECT ${COLS} FROM company_memberships WHERE company_id = $1 AND id = $2 FOR UPDATE`, [
      memberId,
    ]);
  }

  /** The ids of the company's active owners, their rows locked for update. */
  async lockActiveOwners(companyId: string): Promise<string[]> {
    const owners = await this.rows<{ id: string }>(
      companyId,
      `SELECT id FROM company_memberships WHERE company_id = $1 AND membership_role = 'owner' AND status = 'active' ORDER BY id FOR UPDATE`,
    );
    return owners.map((o) => o.id);
  }

  /** The role of the user's active membership, if any. */
  async activeUserRole(companyId: string, userId: string): Promise<string | null> {
    const m = await this.row<{ membershipRole: string }>(
      companyId,
      `SELECT membership_role AS "membershipRole" FROM company_memberships WHERE company_id = $1 AND principal_type = 'user' AND principal_id = $2 AND status = 'active'`,
      [userId],
    );
    return m?.membershipRole ?? null;
  }

  /** The company's human members with their user profile, active first. */
  // reads users (owned by users) for the member directory
  directory(companyId: string): Promise<DirectoryRecord[]> {
    return this.rows<DirectoryRecord>(
      companyId,
      `SELECT u.id, u.name, u.slug, u.image, m.membership_role AS "membershipRole", m.status
         FROM company_memberships m JOIN users u ON u.id = m.principal_id
        WHERE m.company_id = $1 AND m.principal_type = 'user'
        ORDER BY (m.status = 'active') DESC, lower(u.name), u.id`,
    );
  }
}
