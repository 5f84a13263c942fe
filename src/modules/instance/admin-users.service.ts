import { Injectable } from '@nestjs/common';
import type { Actor } from '../../common/auth/actor';
import { CompanyAccessService } from '../../common/auth/company-access.service';
import { badRequest, notFound } from '../../common/errors/domain-error';
import { MembershipsService } from '../access/memberships.service';
import { toUserResponse, UserResponseDto, UserRecord } from './user.types';
import { CompanyAccessResponseDto, CompanyAccessEntryDto } from './dto/admin-users.dto';
import { instanceError } from './instance.errors';
import { InstanceUsers } from './instance-users.port';

const likePattern = (q: string) => `%${q.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

/** Instance administration of users: listing, instance admin role, company access. */
@Injectable()
export class AdminUsersService {
  constructor(
    private readonly store: InstanceUsers,
    private readonly memberships: MembershipsService,
    private readonly companies: CompanyAccessService,
  ) {}

  async list(query?: string): Promise<UserResponseDto[]> {
    const q = query?.trim() || null;
    const rows = await this.store.users.list(q === null ? null : likePattern(q));
    return rows.map(toUserResponse);
  }

  async promote(userId: string): Promise<UserResponseDto> {
    await this.load(userId);
    return toUserResponse(await this.store.users.promote(userId));
  }

  /** The last instance admin stays (409): an authenticated instance must keep someone who can administer it. */
  async demote(userId: string): Promise<UserResponseDto> {
    const user = await this.load(userId);
    if (user.instanceRole === null) return toUserResponse(user);
    const admins = await this.store.users.lockInstanceAdmins();
    if (!admins.some((id) => id !== userId)) throw instanceError('last_instance_admin', 'The last instance admin cannot be demoted');
    return toUserResponse(await this.store.users.demote(userId));
  }

  async companyAccess(userId: string): Promise<CompanyAccessResponseDto> {
    const user = await this.load(userId);
    const rows = await this.memberships.companiesOfUser(userId);
    return {
      userId,
      isInstanceAdmin: user.instanceRole !== null,
      companies: rows.map((m) => ({
        companyId: m.companyId,
        companyName: m.companyName,
        membershipId: m.id,
        membershipRole: m.membershipRole,
        status: m.status,
      })),
    };
  }

  async replaceCompanyAccess(actor: Actor, userId: string, entries: CompanyAccessEntryDto[]): Promise<CompanyAccessResponseDto> {
    await this.load(userId, true);
    const ids = [...new Set(entries.map((e) => e.companyId))];
    if (ids.length !== entries.length) throw badRequest('companies lists a company twice');
    const known = await Promise.all(ids.map((id) => this.companies.companyExists(id)));
    const missing = ids.filter((_, i) => !known[i]);
    if (missing.length) throw instanceError('unknown_company', `Unknown companies: ${missing.join(', ')}`, { companyIds: missing });
    await this.memberships.replaceUserAccess(userId, entries, actor);
    return this.companyAccess(userId);
  }

  private async load(userId: string, lock = false): Promise<UserRecord> {
    const row = await this.store.users.findById(userId, lock);
    if (!row) throw notFound('User');
    return row;
  }
}
