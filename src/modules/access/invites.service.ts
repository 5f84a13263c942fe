import { Injectable } from '@nestjs/common';
import { type Actor, LOCAL_BOARD_USER_ID } from '../../common/auth/actor';
import { InviteSkills, type InviteSkill } from './invite-skills.port';
import { generateToken, sha256Hex, tokenDisplayPrefix, tokenKind } from '../../common/auth/tokens';
import { DomainError, notFound } from '../../common/errors/domain-error';
import { isUuid } from '../../common/http/uuid';
import { AppConfig } from '../../config/app-config';
import { iso, isoRequired } from '../../database/row-mapping';
import { AccessPermissions } from './access-permissions.service';
import {
  CreatedInviteResponseDto,
  CreateInviteDto,
  InviterDto,
  InviteResponseDto,
  InvitesPageDto,
  PublicInviteDto,
  TestResolutionResponseDto,
} from './dto/invite.dto';
import { inviteUrl, OnboardingContext } from './invite-onboarding';
import { InviteRow, InvitesRepository, ResolvedInvite } from './invites.repository';
import { accessError } from './access.errors';

const DEFAULT_VALIDITY_HOURS = 168;

export const inviteStatus = (row: InviteRow): 'active' | 'revoked' | 'expired' =>
  row.revoked_at ? 'revoked' : new Date(row.expires_at).getTime() <= Date.now() ? 'expired' : 'active';

export function toInviteResponse(row: InviteRow): InviteResponseDto {
  return {
    id: row.id,
    companyId: row.company_id,
    role: row.role,
    allowedJoinTypes: row.allowed_join_types,
    status: inviteStatus(row),
    message: row.message,
    tokenPrefix: row.token_prefix,
    expiresAt: isoRequired(row.expires_at),
    revokedAt: iso(row.revoked_at),
    createdByUserId: row.created_by_user_id,
    createdByAgentId: row.created_by_agent_id,
    createdAt: isoRequired(row.created_at),
    state: inviteStatus(row),
    inviteType: 'company_join',
    humanRole: row.allowed_join_types === 'agent' ? null : row.role,
    inviteMessage: row.message,
    invitedByUserId: row.created_by_user_id,
  };
}

const PAGE_SIZE = 50;

/** The user who sent an invite: their profile, or the local board (which has no user row). */
function inviterOf(r: InviteRow & { inviter_name: string | null; inviter_email: string | null }): InviterDto | null {
  if (!r.created_by_user_id) return null;
  if (r.inviter_name !== null) return { id: r.created_by_user_id, name: r.inviter_name, email: r.inviter_email };
  return r.created_by_user_id === LOCAL_BOARD_USER_ID ? { id: LOCAL_BOARD_USER_ID, name: 'Local board', email: null } : null;
}

/** Invites: created by holders of `users:invite`; the token is shown once and only its hash is stored. */
@Injectable()
export class InvitesService {
  constructor(
    private readonly repo: InvitesRepository,
    private readonly config: AppConfig,
    private readonly permissions: AccessPermissions,
    private readonly inviteSkills: InviteSkills,
  ) {}

  /** Skills beyond the onboarding ones offered at /invites/{token}/skills (the skills module adds the bundled catalog skills). */
  get extraSkills(): (() => InviteSkill[]) | undefined {
    return this.inviteSkills.list;
  }

  async create(actor: Actor, companyId: string, dto: CreateInviteDto): Promise<CreatedInviteResponseDto> {
    await this.permissions.assert(actor, companyId, 'users:invite');
    const role = dto.role ?? dto.humanRole ?? 'member';
    if (role === 'owner') await this.permissions.assertOwner(actor, companyId);
    const token = generateToken('iv');
    const row = await this.repo.insert(companyId, {
      tokenHash: sha256Hex(token),
      tokenPrefix: tokenDisplayPrefix(token),
      role,
      allowedJoinTypes: dto.allowedJoinTypes ?? 'both',
      message: dto.message ?? dto.agentMessage ?? null,
      expiresInHours: dto.expiresInHours ?? DEFAULT_VALIDITY_HOURS,
      createdByUserId: actor.kind === 'board' ? actor.userId : null,
      createdByAgentId: actor.kind === 'agent' ? actor.agentId : null,
    });
    const url = inviteUrl({ baseUrl: this.config.publicUrl, token });
    return { ...toInviteResponse(row), token, inviteUrl: url, onboardingTextUrl: `${url}/onboarding.txt` };
  }

  async list(actor: Actor, companyId: string): Promise<InviteResponseDto[]> {
    await this.permissions.assert(actor, companyId, 'users:invite');
    const rows = await this.repo.listByCompany(companyId);
    return rows.map(toInviteResponse);
  }

  /** The invites page of the board UI: a page of invites with who sent each, and the offset of the next page. */
  async page(actor: Actor, companyId: string, limit = PAGE_SIZE, offset = 0): Promise<InvitesPageDto> {
    await this.permissions.assert(actor, companyId, 'users:invite');
    const rows = await this.repo.listPage(companyId, limit + 1, offset);
    const invites = rows.slice(0, limit).map((r) => ({ ...toInviteResponse(r), invitedByUser: inviterOf(r) }));
    return { invites, nextOffset: rows.length > limit ? offset + limit : null };
  }

  /** Revoking twice keeps the first revocation time. */
  /** `routeCompanyId`: the company the guard resolved from the path (undefined when it knows no such invite). */
  async revoke(actor: Actor, routeCompanyId: string | undefined, inviteId: string): Promise<InviteResponseDto> {
    const found = routeCompanyId && isUuid(inviteId) ? await this.repo.lockInCompany(routeCompanyId, inviteId) : null;
    if (!found) throw notFound('Invite');
    await this.permissions.assert(actor, found.company_id, 'users:invite');
    const row = await this.repo.revoke(found.company_id, inviteId);
    return toInviteResponse(row);
  }

  /** The invite behind a token: 404 unknown, 410 revoked or expired. `lock` for accepting. */
  async resolve(token: string, opts: { lock?: boolean } = {}): Promise<ResolvedInvite> {
    const row = await this.find(token, opts.lock);
    const status = inviteStatus(row);
    if (status !== 'active') {
      throw accessError(
        status === 'revoked' ? 'invite_revoked' : 'invite_expired',
        `Invite has been ${status === 'revoked' ? 'revoked' : 'expired'}`,
        {
          status,
        },
      );
    }
    return row;
  }

  async publicView(token: string): Promise<PublicInviteDto> {
    const row = await this.resolve(token);
    const url = inviteUrl({ baseUrl: this.config.publicUrl, token });
    return {
      id: row.id,
      companyId: row.company_id,
      companyName: row.company_name,
      companyDescription: row.company_description,
      companyLogoUrl: row.company_logo_asset_id ? `${url}/logo` : null,
      role: row.role,
      allowedJoinTypes: row.allowed_join_types,
      status: 'active',
      message: row.message,
      expiresAt: isoRequired(row.expires_at),
      onboardingUrl: `${url}/onboarding`,
      onboardingTextUrl: `${url}/onboarding.txt`,
      skillsIndexUrl: `${url}/skills/index`,
      acceptUrl: `${url}/accept`,
    };
  }

  async onboardingContext(token: string): Promise<OnboardingContext> {
    const row = await this.resolve(token);
    return {
      baseUrl: this.config.publicUrl,
      token,
      invite: {
        id: row.id,
        role: row.role,
        allowedJoinTypes: row.allowed_join_types,
        expiresAt: isoRequired(row.expires_at),
        message: row.message,
      },
      company: { id: row.company_id, name: row.company_name, description: row.company_description },
    };
  }

  /**
   * Whether a URL the recipient was given leads to this invite: it carries the token and its origin
   * is the service's public URL. Nothing is fetched (no requests to caller-chosen addresses).
   */
  async testResolution(token: string, url: string): Promise<TestResolutionResponseDto> {
    const row = await this.find(token);
    let parsed: URL;
    try {
      parsed = new URL(url);
      if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new Error('protocol');
    } catch {
      throw new DomainError(400, 'validation_failed', 'url must be an absolute http(s) URL', {
        fields: [{ field: 'url', messages: ['url must be a URL'] }],
      });
    }
    const segments = parsed.pathname.split('/').map((s) => {
      try {
        return decodeURIComponent(s);
      } catch {
        return s;
      }
    });
    const tokenMatches = segments.includes(token) || parsed.searchParams.get('token') === token;
    const expectedOrigin = new URL(this.config.publicUrl).origin;
    const originMatches = parsed.origin === expectedOrigin;
    return { url, tokenMatches, originMatches, resolves: tokenMatches && originMatches, expectedOrigin, inviteStatus: inviteStatus(row) };
  }

  private async find(token: string, lock = false): Promise<ResolvedInvite> {
    if (tokenKind(token) !== 'iv') throw notFound('Invite');
    const row = await this.repo.findByTokenHash(sha256Hex(token), lock);
    if (!row) throw notFound('Invite');
    return row;
  }
}
