import { Injectable } from '@nestjs/common';
import type { Actor } from '../../common/auth/actor';
import { notFound } from '../../common/errors/domain-error';
import { isUuid } from '../../common/http/uuid';
import { Db } from '../../database/db.service';
import { isoRequired } from '../../database/row-mapping';
import { accessError } from './access.errors';
import { MemberDetailRow, MembershipRow, MembershipsRepository, PrincipalType } from './memberships.repository';
import { MembershipRole, MembershipStatus, NormalizedGrant, ROLE_DEFAULT_GRANTS } from './permission-keys';

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

const actorId = (actor: Actor | undefined) => (actor ? (actor.kind === 'agent' ? actor.agentId : actor.userId) : 'system');

/**
 * Company memberships and their grants. Roles: owner, admin, member, viewer (operator for the
 * role default); status active|inactive. A company keeps at least one active owner once it has one.
 */
@Injectable()
export class MembershipsService {
  constructor(
    private readonly db: Db,
    private readonly repo: MembershipsRepository,
  ) {}

  async list(companyId: string): Promise<MemberResponse[]> {
    const rows = await this.repo.listDetailed(companyId);
    return this.withGrants(companyId, rows);
  }

  async get(companyId: string, memberId: string): Promise<MemberResponse> {
    if (!isUuid(memberId)) throw notFound('Member');
    const rows = await this.repo.getDetailed(companyId, memberId);
    if (!rows.length) throw notFound('Member');
    return (await this.withGrants(companyId, rows))[0];
  }

  /** The membership of a principal in a company, if any. */
  async find(companyId: string, type: PrincipalType, principalId: string): Promise<MembershipRow | undefined> {
    return (await this.repo.find(companyId, type, principalId)) ?? undefined;
  }

  /**
   * A principal joins with a role. A new membership receives the role's default grants; an
   * existing one is reactivated with the role (its grants are left as they are).
   */
  async join(companyId: string, type: PrincipalType, principalId: string, role: MembershipRole, by?: Actor): Promise<MembershipRow> {
    const row = await this.repo.upsertActive(companyId, type, principalId, role);
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
        await this.repo.setRoleAndStatus(companyId, current.id, role, status);
      }
      if (change.grants) {
        await this.repo.deleteGrants(companyId, current.principal_type, current.principal_id);
        await this.insertGrants(companyId, current.principal_type, current.principal_id, change.grants, by);
      }
      return this.get(companyId, memberId);
    });
  }

  /** Memberships (any status) of a user across companies. */
  async companiesOfUser(userId: string): Promise<Array<MembershipRow & { company_name: string }>> {
    return this.repo.companiesOfUser(userId);
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
    const before = await this.repo.companyIdsOfUser(userId);
    await this.serialize([...wanted.keys(), ...before]);
    const current = await this.repo.lockAllOfUser(userId);
    for (const m of current) {
      if (!wanted.has(m.company_id) && m.status === 'active') {
        await this.assertKeepsAnOwner(m, m.membership_role, 'inactive');
        await this.repo.deactivate(m.company_id, m.id);
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
        await this.repo.activateWithRole(companyId, existing.id, nextRole);
      }
    }
  }

  async isActiveMember(companyId: string, type: PrincipalType, principalId: string): Promise<boolean> {
    const m = await this.find(companyId, type, principalId);
    return m?.status === 'active';
  }

  async activeCompanyIds(userId: string): Promise<string[]> {
    return this.repo.activeCompanyIdsOfUser(userId);
  }

  /**
   * Role and status changes of a company's members run one at a time (transaction-scoped advisory
   * locks, taken in a fixed order), so the last-owner check and the change cannot interleave or deadlock.
   */
  private async serialize(companyIds: string[]): Promise<void> {
    for (const id of [...new Set(companyIds)].sort()) {
      await this.repo.lockMembersOf(id);
    }
  }

  private async lock(companyId: string, memberId: string): Promise<MembershipRow> {
    if (!isUuid(memberId)) throw notFound('Member');
    const row = await this.repo.lockMember(companyId, memberId);
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
    const owners = await this.repo.lockActiveOwners(current.company_id);
    if (!owners.some((id) => id !== current.id)) {
      throw accessError('last_owner', 'The last active owner of a company cannot be demoted or deactivated');
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
    await this.repo.insertGrants(companyId, type, principalId, grants, actorId(by));
  }

  private async withGrants(companyId: string, rows: MemberDetailRow[]): Promise<MemberResponse[]> {
    const grants = await this.repo.grantsOf(
      companyId,
      rows.map((r) => r.principal_type),
      rows.map((r) => r.principal_id),
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
      createdAt: isoRequired(r.created_at),
      updatedAt: isoRequired(r.updated_at),
    }));
  }
}
