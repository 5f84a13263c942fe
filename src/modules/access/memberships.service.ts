import { Injectable } from '@nestjs/common';
import type { Actor } from '../../common/auth/actor';
import { notFound } from '../../common/errors/domain-error';
import { isUuid } from '../../common/http/uuid';
import { Db } from '../../database/db.service';
import { isoRequired } from '../../database/row-mapping';
import { accessError } from './access.errors';
import { MemberDetailRecord, MembershipRecord, MembershipsRepository, PrincipalType } from './memberships.repository';
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
  async find(companyId: string, type: PrincipalType, principalId: string): Promise<MembershipRecord | undefined> {
    return (await this.repo.find(companyId, type, principalId)) ?? undefined;
  }

  /**
   * A principal joins with a role. A new membership receives the role's default grants; an
   * existing one is reactivated with the role (its grants are left as they are).
   */
  async join(companyId: string, type: PrincipalType, principalId: string, role: MembershipRole, by?: Actor): Promise<MembershipRecord> {
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
      const role = change.membershipRole ?? current.membershipRole;
      const status = change.status ?? current.status;
      await this.assertKeepsAnOwner(current, role, status);
      if (role !== current.membershipRole || status !== current.status) {
        await this.repo.setRoleAndStatus(companyId, current.id, role, status);
      }
      if (change.grants) {
        await this.repo.deleteGrants(companyId, current.principalType, current.principalId);
        await this.insertGrants(companyId, current.principalType, current.principalId, change.grants, by);
      }
      return this.get(companyId, memberId);
    });
  }

  /** Memberships (any status) of a user across companies. */
  async companiesOfUser(userId: string): Promise<Array<MembershipRecord & { companyName: string }>> {
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
      if (!wanted.has(m.companyId) && m.status === 'active') {
        await this.assertKeepsAnOwner(m, m.membershipRole, 'inactive');
        await this.repo.deactivate(m.companyId, m.id);
      }
    }
    for (const [companyId, role] of wanted) {
      const existing = current.find((m) => m.companyId === companyId);
      if (!existing) {
        await this.join(companyId, 'user', userId, role ?? 'member', by);
        continue;
      }
      const nextRole = role ?? existing.membershipRole;
      if (existing.status !== 'active' || nextRole !== existing.membershipRole) {
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

  private async lock(companyId: string, memberId: string): Promise<MembershipRecord> {
    if (!isUuid(memberId)) throw notFound('Member');
    const row = await this.repo.lockMember(companyId, memberId);
    if (!row) throw notFound('Member');
    return row;
  }

  /**
   * The last active owner of a company cannot be demoted or deactivated. The company's active owner
   * rows are locked, so two concurrent demotions of the last two owners cannot both succeed.
   */
  private async assertKeepsAnOwner(current: MembershipRecord, nextRole: MembershipRole, nextStatus: MembershipStatus): Promise<void> {
    const wasOwner = current.membershipRole === 'owner' && current.status === 'active';
    const staysOwner = nextRole === 'owner' && nextStatus === 'active';
    if (!wasOwner || staysOwner) return;
    const owners = await this.repo.lockActiveOwners(current.companyId);
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

  private async withGrants(companyId: string, rows: MemberDetailRecord[]): Promise<MemberResponse[]> {
    const grants = await this.repo.grantsOf(
      companyId,
      rows.map((r) => r.principalType),
      rows.map((r) => r.principalId),
    );
    return rows.map((r) => ({
      id: r.id,
      companyId: r.companyId,
      principalType: r.principalType,
      principalId: r.principalId,
      membershipRole: r.membershipRole,
      status: r.status,
      user:
        r.principalType === 'user' && r.userName !== null
          ? { id: r.principalId, name: r.userName, email: r.userEmail, slug: r.userSlug as string, image: r.userImage }
          : null,
      agent:
        r.principalType === 'agent' && r.agentName !== null
          ? { id: r.principalId, name: r.agentName, status: r.agentStatus as string }
          : null,
      grants: grants
        .filter((g) => g.principalType === r.principalType && g.principalId === r.principalId)
        .map((g) => ({ permissionKey: g.permissionKey, scope: g.scope ?? null })),
      createdAt: isoRequired(r.createdAt),
      updatedAt: isoRequired(r.updatedAt),
    }));
  }
}
