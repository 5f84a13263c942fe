import { Injectable } from '@nestjs/common';
import type { Actor } from '../../common/auth/actor';
import { conflict, notFound } from '../../common/errors/domain-error';
import { isUuid } from '../../common/http/uuid';
import { Db } from '../../database/db.service';
import { MembershipRole, MembershipStatus, NormalizedGrant, ROLE_DEFAULT_GRANTS } from './permission-keys';

export type PrincipalType = 'user' | 'agent';

interface MembershipRow {
  id: string;
  company_id: string;
  principal_type: PrincipalType;
  principal_id: string;
  membership_role: MembershipRole;
  status: MembershipStatus;
  created_at: Date;
  updated_at: Date;
}

interface MemberDetailRow extends MembershipRow {
  user_name: string | null;
  user_email: string | null;
  user_slug: string | null;
  user_image: string | null;
  agent_name: string | null;
  agent_status: string | null;
}

export interface MemberResponse {
  id: string;
  companyId: string;
  principalType: PrincipalType;
  principalId: string;
  membershipRole: MembershipRole;
  status: MembershipStatus;
  user: { id: string; name: string; email: string | null; slug: string; image: string | null } | null;
  agent: { id: string; name: string; status: string } | null;
  grants: NormalizedGrant[];
  createdAt: string;
  updatedAt: string;
}

const MEMBER_SELECT = `
  SELECT m.*, u.name AS user_name, u.email AS user_email, u.slug AS user_slug, u.image AS user_image,
         a.name AS agent_name, a.status AS agent_status
    FROM company_memberships m
    LEFT JOIN users u ON m.principal_type = 'user' AND u.id = m.principal_id
    LEFT JOIN agents a ON m.principal_type = 'agent' AND a.id::text = m.principal_id`;

const actorId = (actor: Actor | undefined) => (actor ? (actor.kind === 'agent' ? actor.agentId : actor.userId) : 'system');

/**
 * Company memberships and their grants. Roles: owner, admin, member, viewer (operator for the
 * role default); status active|inactive. A company keeps at least one active owner once it has one.
 */
@Injectable()
export class MembershipsService {
  constructor(private readonly db: Db) {}

  async list(companyId: string): Promise<MemberResponse[]> {
    const rows = await this.db.query<MemberDetailRow>(`${MEMBER_SELECT} WHERE m.company_id = $1 ORDER BY m.created_at, m.id`, [companyId]);
    return this.withGrants(companyId, rows);
  }

  async get(companyId: string, memberId: string): Promise<MemberResponse> {
    if (!isUuid(memberId)) throw notFound('Member');
    const rows = await this.db.query<MemberDetailRow>(`${MEMBER_SELECT} WHERE m.company_id = $1 AND m.id = $2`, [companyId, memberId]);
    if (!rows.length) throw notFound('Member');
    return (await this.withGrants(companyId, rows))[0];
  }

  /** The membership of a principal in a company, if any. */
  async find(companyId: string, type: PrincipalType, principalId: string): Promise<MembershipRow | undefined> {
    const [row] = await this.db.query<MembershipRow>(
      `SELECT * FROM company_memberships WHERE company_id = $1 AND principal_type = $2 AND principal_id = $3`,
      [companyId, type, principalId],
    );
    return row;
  }

  /**
   * A principal joins with a role. A new membership receives the role's default grants; an
   * existing one is reactivated with the role (its grants are left as they are).
   */
  async join(companyId: string, type: PrincipalType, principalId: string, role: MembershipRole, by?: Actor): Promise<MembershipRow> {
    const [row] = await this.db.query<MembershipRow & { inserted: boolean }>(
      `INSERT INTO company_memberships (company_id, principal_type, principal_id, membership_role, status)
       VALUES ($1, $2, $3, $4, 'active')
       ON CONFLICT (company_id, principal_type, principal_id)
       DO UPDATE SET membership_role = EXCLUDED.membership_role, status = 'active', updated_at = now()
       RETURNING *, (xmax = 0) AS inserted`,
      [companyId, type, principalId, role],
    );
    if (row.inserted && type === 'user') {
      await this.insertGrants(
        companyId,
        type,
        principalId,
        ROLE_DEFAULT_GRANTS[role].map((k) => ({ permissionKey: k, scope: null })),
        by,
      );
    }
    return row;
  }

  /** Changes role and/or status, and replaces grants when given; one transaction, last-owner rule enforced. */
  async update(
    companyId: string,
    memberId: string,
    change: { membershipRole?: MembershipRole; status?: MembershipStatus; grants?: NormalizedGrant[] },
    by: Actor,
  ): Promise<MemberResponse> {
    return this.db.transaction(async () => {
      await this.serialize([companyId]);
      const current = await this.lock(companyId, memberId);
      const role = change.membershipRole ?? current.membership_role;
      const status = change.status ?? current.status;
      await this.assertKeepsAnOwner(current, role, status);
      if (role !== current.membership_role || status !== current.status) {
        await this.db.query(`UPDATE company_memberships SET membership_role = $2, status = $3, updated_at = now() WHERE id = $1`, [
          current.id,
          role,
          status,
        ]);
      }
      if (change.grants) {
        await this.db.query(`DELETE FROM principal_permission_grants WHERE company_id = $1 AND principal_type = $2 AND principal_id = $3`, [
          companyId,
          current.principal_type,
          current.principal_id,
        ]);
        await this.insertGrants(companyId, current.principal_type, current.principal_id, change.grants, by);
      }
      return this.get(companyId, memberId);
    });
  }

  /** Memberships (any status) of a user across companies. */
  async companiesOfUser(userId: string): Promise<Array<MembershipRow & { company_name: string }>> {
    return this.db.query(
      `SELECT m.*, c.name AS company_name FROM company_memberships m JOIN companies c ON c.id = m.company_id
        WHERE m.principal_type = 'user' AND m.principal_id = $1 ORDER BY c.name, c.id`,
      [userId],
    );
  }

  /**
   * Replaces a user's company access: listed companies become active memberships (new ones with the
   * given role, default member, and its grants); every other membership of the user becomes inactive.
   */
  async replaceUserAccess(
    userId: string,
    entries: Array<{ companyId: string; membershipRole?: MembershipRole }>,
    by: Actor,
  ): Promise<void> {
    const wanted = new Map(entries.map((e) => [e.companyId, e.membershipRole]));
    const before = await this.db.query<{ company_id: string }>(
      `SELECT company_id FROM company_memberships WHERE principal_type = 'user' AND principal_id = $1`,
      [userId],
    );
    await this.serialize([...wanted.keys(), ...before.map((m) => m.company_id)]);
    const current = await this.db.query<MembershipRow>(
      `SELECT * FROM company_memberships WHERE principal_type = 'user' AND principal_id = $1 ORDER BY company_id FOR UPDATE`,
      [userId],
    );
    for (const m of current) {
      if (!wanted.has(m.company_id) && m.status === 'active') {
        await this.assertKeepsAnOwner(m, m.membership_role, 'inactive');
        await this.db.query(`UPDATE company_memberships SET status = 'inactive', updated_at = now() WHERE id = $1`, [m.id]);
      }
    }
    for (const [companyId, role] of wanted) {
      const existing = current.find((m) => m.company_id === companyId);
      if (!existing) {
        await this.join(companyId, 'user', userId, role ?? 'member', by);
        continue;
      }
      const nextRole = role ?? existing.membership_role;
      if (existing.status !== 'active' || nextRole !== existing.membership_role) {
        await this.assertKeepsAnOwner(existing, nextRole, 'active');
        await this.db.query(`UPDATE company_memberships SET membership_role = $2, status = 'active', updated_at = now() WHERE id = $1`, [
          existing.id,
          nextRole,
        ]);
      }
    }
  }

  async isActiveMember(companyId: string, type: PrincipalType, principalId: string): Promise<boolean> {
    const m = await this.find(companyId, type, principalId);
    return m?.status === 'active';
  }

  async activeCompanyIds(userId: string): Promise<string[]> {
    const rows = await this.db.query<{ company_id: string }>(
      `SELECT company_id FROM company_memberships WHERE principal_type = 'user' AND principal_id = $1 AND status = 'active'`,
      [userId],
    );
    return rows.map((r) => r.company_id);
  }

  /**
   * Role and status changes of a company's members run one at a time (transaction-scoped advisory
   * locks, taken in a fixed order), so the last-owner check and the change cannot interleave or deadlock.
   */
  private async serialize(companyIds: string[]): Promise<void> {
    for (const id of [...new Set(companyIds)].sort()) {
      await this.db.query(`SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`, [`company_members:${id}`]);
    }
  }

  private async lock(companyId: string, memberId: string): Promise<MembershipRow> {
    if (!isUuid(memberId)) throw notFound('Member');
    const [row] = await this.db.query<MembershipRow>(`SELECT * FROM company_memberships WHERE id = $1 AND company_id = $2 FOR UPDATE`, [
      memberId,
      companyId,
    ]);
    if (!row) throw notFound('Member');
    return row;
  }

  /**
   * The last active owner of a company cannot be demoted or deactivated. The company's active owner
   * rows are locked, so two concurrent demotions of the last two owners cannot both succeed.
   */
  private async assertKeepsAnOwner(current: MembershipRow, nextRole: MembershipRole, nextStatus: MembershipStatus): Promise<void> {
    const wasOwner = current.membership_role === 'owner' && current.status === 'active';
    const staysOwner = nextRole === 'owner' && nextStatus === 'active';
    if (!wasOwner || staysOwner) return;
    const owners = await this.db.query<{ id: string }>(
      `SELECT id FROM company_memberships WHERE company_id = $1 AND membership_role = 'owner' AND status = 'active' ORDER BY id FOR UPDATE`,
      [current.company_id],
    );
    if (!owners.some((o) => o.id !== current.id)) {
      throw conflict('The last active owner of a company cannot be demoted or deactivated', 'last_owner');
    }
  }

  private async insertGrants(
    companyId: string,
    type: PrincipalType,
    principalId: string,
    grants: NormalizedGrant[],
    by?: Actor,
  ): Promise<void> {
    if (!grants.length) return;
    await this.db.query(
      `INSERT INTO principal_permission_grants (company_id, principal_type, principal_id, permission_key, scope, granted_by)
       SELECT $1, $2, $3, g.key, g.scope, $6 FROM unnest($4::text[], $5::jsonb[]) AS g(key, scope)`,
      [
        companyId,
        type,
        principalId,
        grants.map((g) => g.permissionKey),
        grants.map((g) => (g.scope ? JSON.stringify(g.scope) : null)),
        actorId(by),
      ],
    );
  }

  private async withGrants(companyId: string, rows: MemberDetailRow[]): Promise<MemberResponse[]> {
    const grants = await this.db.query<{
      principal_type: string;
      principal_id: string;
      permission_key: NormalizedGrant['permissionKey'];
      scope: NormalizedGrant['scope'];
    }>(
      `SELECT principal_type, principal_id, permission_key, scope FROM principal_permission_grants
        WHERE company_id = $1 AND (principal_type, principal_id) IN (SELECT * FROM unnest($2::text[], $3::text[]))
        ORDER BY permission_key, created_at`,
      [companyId, rows.map((r) => r.principal_type), rows.map((r) => r.principal_id)],
    );
    return rows.map((r) => ({
      id: r.id,
      companyId: r.company_id,
      principalType: r.principal_type,
      principalId: r.principal_id,
      membershipRole: r.membership_role,
      status: r.status,
      user:
        r.principal_type === 'user' && r.user_name !== null
          ? { id: r.principal_id, name: r.user_name, email: r.user_email, slug: r.user_slug as string, image: r.user_image }
          : null,
      agent:
        r.principal_type === 'agent' && r.agent_name !== null
          ? { id: r.principal_id, name: r.agent_name, status: r.agent_status as string }
          : null,
      grants: grants
        .filter((g) => g.principal_type === r.principal_type && g.principal_id === r.principal_id)
        .map((g) => ({ permissionKey: g.permission_key, scope: g.scope ?? null })),
      createdAt: new Date(r.created_at).toISOString(),
      updatedAt: new Date(r.updated_at).toISOString(),
    }));
  }
}
