import { Injectable } from '@nestjs/common';
import type { Actor } from '../../common/auth/actor';
import { AccessPermissions } from './access-permissions.service';
import { DirectoryUserDto, MembersPageDto } from './dto/member.dto';
import { MembershipsRepository } from './memberships.repository';
import { MemberResponse, MembershipsService } from './memberships.service';
import { MembershipRole, MembershipStatus, normalizeGrants } from './permission-keys';

/**
 * The members routes: board members read on company access, agents need `users:manage_permissions`
 * or `users:invite` (the keys that act on members); changes need `users:manage_permissions`.
 */
@Injectable()
export class MembersService {
  constructor(
    private readonly repo: MembershipsRepository,
    private readonly memberships: MembershipsService,
    private readonly permissions: AccessPermissions,
  ) {}

  async list(actor: Actor, companyId: string): Promise<MemberResponse[]> {
    if (actor.kind === 'agent') {
      await this.permissions
        .assert(actor, companyId, 'users:manage_permissions')
        .catch(() => this.permissions.assert(actor, companyId, 'users:invite'));
    }
    const members = await this.memberships.list(companyId);
    if (actor.kind === 'board') return members;
    return members.map((m) => (m.user ? { ...m, user: { ...m.user, email: null } } : m));
  }

  /** The members page of the board UI: its human members (agents have their own pages) and what the caller may do on it. */
  async page(actor: Actor, companyId: string): Promise<MembersPageDto> {
    const members = (await this.list(actor, companyId)).filter((m) => m.principalType === 'user');
    const [currentUserRole, canManageMembers, canInviteUsers, canApproveJoinRequests] = await Promise.all([
      this.permissions.roleOf(actor, companyId),
      this.permissions.holds(actor, companyId, 'users:manage_permissions'),
      this.permissions.holds(actor, companyId, 'users:invite'),
      this.permissions.holds(actor, companyId, 'joins:approve'),
    ]);
    return { members, access: { currentUserRole, canManageMembers, canInviteUsers, canApproveJoinRequests } };
  }

  async directory(companyId: string): Promise<DirectoryUserDto[]> {
    const rows = await this.repo.directory(companyId);
    return rows.map((r) => ({ id: r.id, name: r.name, slug: r.slug, image: r.image, membershipRole: r.membershipRole, status: r.status }));
  }

  async update(
    actor: Actor,
    companyId: string,
    memberId: string,
    change: { membershipRole?: MembershipRole; status?: MembershipStatus; grants?: unknown[] },
  ): Promise<MemberResponse> {
    await this.permissions.assert(actor, companyId, 'users:manage_permissions');
    if (change.membershipRole === 'owner' || (await this.memberships.get(companyId, memberId)).membershipRole === 'owner') {
      await this.permissions.assertOwner(actor, companyId);
    }
    const grants = change.grants === undefined ? undefined : normalizeGrants(change.grants);
    return this.memberships.update(companyId, memberId, { membershipRole: change.membershipRole, status: change.status, grants }, actor);
  }
}
