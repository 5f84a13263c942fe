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
import { InviteRecord, InvitesRepository, InviteWithInviterRecord, ResolvedInvite } from './invites.repository';
import { accessError } from './access.errors';

const DEFAULT_VALIDITY_HOURS = 168;

export const inviteStatus = (row: InviteRecord): 'active' | 'revoked' | 'expired' =>
  row.revokedAt ? 'revoked' : new Date(row.expiresAt).getTime() <= Date.now() ? 'expired' : 'active';

export function toInviteResponse(row: InviteRecord): InviteResponseDto {
  return {
    id: row.id,
    companyId: row.companyId,
    role: row.role,
    allowedJoinTypes: row.allowedJoinTypes,
    status: inviteStatus(row),
    message: row.message,
    tokenPrefix: row.tokenPrefix,
    expiresAt: isoRequired(row.expiresAt),
    revokedAt: iso(row.revokedAt),
    createdByUserId: row.createdByUserId,
    createdByAgentId: row.createdByAgentId,
    createdAt: isoRequired(row.createdAt),
    state: inviteStatus(row),
    inviteType: 'company_join',
    humanRole: row.allowedJoinTypes === 'agent' ? null : row.role,
    inviteMessage: row.message,
    invitedByUserId: row.createdByUserId,
  };
}

const PAGE_SIZE = 50;

/** The user who sent an invite: their profile, or the local board (which has no user row). */
function inviterOf(r: InviteWithInviterRecord): InviterDto | null {
  if (!r.createdByUserId) return null;
  if (r.inviterName !== null) return { id: r.createdByUserId, name: r.inviterName, email: r.inviterEmail };
  return r.createdByUserId === LOCAL_BOARD_USER_ID ? { id: LOCAL_BOARD_USER_ID, name: 'Local board', email: null } : null;
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
    await this.permissions.assert(actor, found.companyId, 'users:invite');
    const row = await this.repo.revoke(found.companyId, inviteId);
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
      companyId: row.companyId,
      companyName: row.companyName,
      companyDescription: row.companyDescription,
      companyLogoUrl: row.companyLogoAssetId ? `${url}/logo` : null,
      role: row.role,
      allowedJoinTypes: row.allowedJoinTypes,
      status: 'active',
      message: row.message,
      expiresAt: isoRequired(row.expiresAt),
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
        allowedJoinTypes: row.allowedJoinTypes,
        expiresAt: isoRequired(row.expiresAt),
        message: row.message,
      },
      company: { id: row.companyId, name: row.companyName, description: row.companyDescription },
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
