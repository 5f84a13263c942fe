import { Injectable } from '@nestjs/common';
import type { Actor } from '../../common/auth/actor';
import { badRequest, conflict, notFound, unprocessable } from '../../common/errors/domain-error';
import { Db } from '../../database/db.service';
import { MembershipsService } from '../access/memberships.service';
import { toUserResponse, UserResponseDto, UserRow } from '../users/user.types';
import { CompanyAccessResponseDto, CompanyAccessEntryDto } from './dto/admin-users.dto';

const likePattern = (q: string) => `%${q.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

/** Instance administration of users: listing, instance admin role, company access. */
@Injectable()
export class AdminUsersService {
  constructor(
    private readonly db: Db,
    private readonly memberships: MembershipsService,
  ) {}

  async list(query?: string): Promise<UserResponseDto[]> {
    const q = query?.trim() || null;
    const rows = await this.db.query<UserRow>(
      `SELECT * FROM users
        WHERE $1::text IS NULL OR email ILIKE $1 OR name ILIKE $1 OR slug ILIKE $1
        ORDER BY created_at, id LIMIT 500`,
      [q === null ? null : likePattern(q)],
    );
    return rows.map(toUserResponse);
  }

  async promote(userId: string): Promise<UserResponseDto> {
    await this.load(userId);
    const [row] = await this.db.query<UserRow>(
      `WITH changed AS (UPDATE users SET instance_role = coalesce(instance_role, 'admin'), updated_at = now() WHERE id = $1 RETURNING *) SELECT * FROM changed`,
      [userId],
    );
    return toUserResponse(row);
  }

  /** The last instance admin stays (409): an authenticated instance must keep someone who can administer it. */
  async demote(userId: string): Promise<UserResponseDto> {
    const user = await this.load(userId);
    if (user.instance_role === null) return toUserResponse(user);
    const admins = await this.db.query<{ id: string }>(`SELECT id FROM users WHERE instance_role IS NOT NULL ORDER BY id FOR UPDATE`);
    if (!admins.some((a) => a.id !== userId)) throw conflict('The last instance admin cannot be demoted', 'last_instance_admin');
    const [row] = await this.db.query<UserRow>(
      `WITH changed AS (UPDATE users SET instance_role = NULL, updated_at = now() WHERE id = $1 RETURNING *) SELECT * FROM changed`,
      [userId],
    );
    return toUserResponse(row);
  }

  async companyAccess(userId: string): Promise<CompanyAccessResponseDto> {
    const user = await this.load(userId);
    const rows = await this.memberships.companiesOfUser(userId);
    return {
      userId,
      isInstanceAdmin: user.instance_role !== null,
      companies: rows.map((m) => ({
        companyId: m.company_id,
        companyName: m.company_name,
        membershipId: m.id,
        membershipRole: m.membership_role,
        status: m.status,
      })),
    };
  }

  async replaceCompanyAccess(actor: Actor, userId: string, entries: CompanyAccessEntryDto[]): Promise<CompanyAccessResponseDto> {
    await this.load(userId, true);
    const ids = [...new Set(entries.map((e) => e.companyId))];
    if (ids.length !== entries.length) throw badRequest('companies lists a company twice');
    const found = await this.db.query<{ id: string }>(`SELECT id FROM companies WHERE id = ANY($1::uuid[])`, [ids]);
    const missing = ids.filter((id) => !found.some((f) => f.id === id));
    if (missing.length) throw unprocessable(`Unknown companies: ${missing.join(', ')}`, 'unknown_company', { companyIds: missing });
    await this.memberships.replaceUserAccess(userId, entries, actor);
    return this.companyAccess(userId);
  }

  private async load(userId: string, lock = false): Promise<UserRow> {
    const [row] = await this.db.query<UserRow>(`SELECT * FROM users WHERE id = $1 ${lock ? 'FOR UPDATE' : ''}`, [userId]);
    if (!row) throw notFound('User');
    return row;
  }
}
