import { ApiDomainErrors } from '../../common/errors/api-domain-errors.decorator';
import { ACCESS_ERRORS } from './access.errors';
import { Body, Controller, Get, Header, HttpCode, Param, Post, Query, Res } from '@nestjs/common';
import { ApiExtraModels, ApiOkResponse, ApiProduces, ApiTags } from '@nestjs/swagger';
import { ApiBoardUiPage, BoardUiPage } from '../../common/http/board-ui-page';
import type { FastifyReply as Response } from 'fastify';
import { LogActivity, NoActivity } from '../../common/activity/log-activity.decorator';
import type { Actor } from '../../common/auth/actor';
import { Authorize, Public } from '../../common/auth/authorize.decorator';
import { CurrentActor } from '../../common/auth/current-actor.decorator';
import { RouteCompany } from '../../common/auth/route-company.decorator';
import { notFound } from '../../common/errors/domain-error';
import { AssetsService } from '../storage/assets.service';
import {
  AcceptInviteDto,
  CreatedInviteResponseDto,
  CreateInviteDto,
  InvitePromptDto,
  InvitePromptResponseDto,
  InviteResponseDto,
  InvitesPageDto,
  InvitesPageQueryDto,
  PublicInviteDto,
  TestResolutionQueryDto,
  TestResolutionResponseDto,
} from './dto/invite.dto';
import { AcceptedJoinRequestDto } from './dto/join-request.dto';
import { invitePrompt, ONBOARDING_SKILLS, onboardingJson, onboardingText } from './invite-onboarding';
import { InvitesService } from './invites.service';
import { JoinRequestsService } from './join-requests.service';

/** what an invite record may show in activity: never the token */
const inviteDetails = (c: { result: Record<string, unknown> }) => ({
  role: c.result.role,
  allowedJoinTypes: c.result.allowedJoinTypes,
  expiresAt: c.result.expiresAt,
});

@ApiTags('invites')
@ApiDomainErrors(ACCESS_ERRORS)
@Controller()
export class InvitesController {
  constructor(
    private readonly invites: InvitesService,
    private readonly joins: JoinRequestsService,
    private readonly assets: AssetsService,
  ) {}

  /**
   * Invites of the company, newest first (no tokens). Needs `users:invite`. The board UI (header
   * `X-Paperclip-Route`) gets a page, `{ invites, nextOffset }` (InvitesPageDto, `limit` and `offset`
   * apply), each invite with who sent it.
   */
  @Get('companies/:companyId/invites')
  @Authorize({ callers: ['board', 'agent'] })
  @ApiBoardUiPage('`{ invites, nextOffset }` (InvitesPageDto)')
  @ApiExtraModels(InvitesPageDto)
  list(
    @CurrentActor() actor: Actor,
    @Param('companyId') companyId: string,
    @Query() q: InvitesPageQueryDto,
    @BoardUiPage() boardUi: boolean,
  ): Promise<InviteResponseDto[] | InvitesPageDto> {
    return boardUi ? this.invites.page(actor, companyId, q.limit, q.offset) : this.invites.list(actor, companyId);
  }

  /** Creates an invite; the token and invite URL are returned once. Needs `users:invite`. */
  @Post('companies/:companyId/invites')
  @HttpCode(201)
  @Authorize({ callers: ['board', 'agent'] })
  @LogActivity('invite.created', { entityType: 'invite', details: inviteDetails })
  create(
    @CurrentActor() actor: Actor,
    @Param('companyId') companyId: string,
    @Body() dto: CreateInviteDto,
  ): Promise<CreatedInviteResponseDto> {
    return this.invites.create(actor, companyId, dto);
  }

  /** Creates an agent-only invite and a prompt that walks an external agent through joining. Needs `users:invite`. */
  @Post('companies/:companyId/openclaw/invite-prompt')
  @HttpCode(201)
  @Authorize({ callers: ['board', 'agent'] })
  @LogActivity('invite.created', {
    entityType: 'invite',
    entityId: (c) => (c.result.invite as { id: string }).id,
    details: () => ({ allowedJoinTypes: 'agent', prompt: true }),
  })
  async prompt(
    @CurrentActor() actor: Actor,
    @Param('companyId') companyId: string,
    @Body() dto: InvitePromptDto,
  ): Promise<InvitePromptResponseDto> {
    const invite = await this.invites.create(actor, companyId, { allowedJoinTypes: 'agent', expiresInHours: dto.expiresInHours });
    const ctx = await this.invites.onboardingContext(invite.token);
    return { invite, prompt: invitePrompt(ctx, dto) };
  }

  /** Revokes an invite by id; the token stops working at once. Needs `users:invite`. */
  @Post('invites/:inviteId/revoke')
  @HttpCode(200)
  @Authorize({ callers: ['board', 'agent'] })
  @LogActivity('invite.revoked', { entityType: 'invite', details: () => ({}) })
  revoke(
    @CurrentActor() actor: Actor,
    @RouteCompany() routeCompanyId: string | undefined,
    @Param('inviteId') inviteId: string,
  ): Promise<InviteResponseDto> {
    return this.invites.revoke(actor, routeCompanyId, inviteId);
  }

  /** The invite as its recipient sees it. 404 unknown token, 410 revoked or expired. */
  @Get('invites/:token')
  @Public()
  view(@Param('token') token: string): Promise<PublicInviteDto> {
    return this.invites.publicView(token);
  }

  /** The inviting company's logo (404 when it has none). */
  @Get('invites/:token/logo')
  @Public()
  @ApiProduces('image/*')
  @ApiOkResponse({ description: 'logo bytes' })
  async logo(@Param('token') token: string, @Res() res: Response): Promise<void> {
    const invite = await this.invites.resolve(token);
    const asset = invite.companyLogoAssetId ? await this.assets.findInCompany(invite.companyId, invite.companyLogoAssetId) : null;
    if (!asset) throw notFound('Logo');
    res.header('Content-Type', asset.contentType);
    res.header('Content-Length', String(asset.byteSize));
    res.header('X-Content-Type-Options', 'nosniff');
    res.header('Content-Security-Policy', "default-src 'none'; style-src 'unsafe-inline'; sandbox");
    await res.send(this.assets.read(asset));
  }

  /** Onboarding material as JSON: company, steps, endpoints and request bodies. */
  @Get('invites/:token/onboarding')
  @Public()
  async onboarding(@Param('token') token: string): Promise<ReturnType<typeof onboardingJson>> {
    return onboardingJson(await this.invites.onboardingContext(token));
  }

  /** The onboarding material as plain text. */
  @Get('invites/:token/onboarding.txt')
  @Public()
  @Header('Content-Type', 'text/plain; charset=utf-8')
  @ApiProduces('text/plain')
  async onboardingTxt(@Param('token') token: string): Promise<string> {
    return onboardingText(await this.invites.onboardingContext(token));
  }

  /** Skills offered to joining agents: name, description, URL. */
  @Get('invites/:token/skills/index')
  @Public()
  async skillsIndex(@Param('token') token: string): Promise<Array<{ name: string; description: string; url: string }>> {
    await this.invites.resolve(token);
    const base = `${(await this.invites.onboardingContext(token)).baseUrl}/api/invites/${encodeURIComponent(token)}/skills`;
    const extra = (this.invites.extraSkills?.() ?? []).filter((s) => !Object.prototype.hasOwnProperty.call(ONBOARDING_SKILLS, s.name));
    return [
      ...Object.entries(ONBOARDING_SKILLS).map(([name, s]) => ({ name, description: s.description, url: `${base}/${name}` })),
      ...extra.map((s) => ({ name: s.name, description: s.description, url: `${base}/${s.name}` })),
    ];
  }

  /** One skill as markdown (SKILL.md). */
  @Get('invites/:token/skills/:skillName')
  @Public()
  @Header('Content-Type', 'text/markdown; charset=utf-8')
  @ApiProduces('text/markdown')
  async skill(@Param('token') token: string, @Param('skillName') skillName: string): Promise<string> {
    const ctx = await this.invites.onboardingContext(token);
    const skill = Object.prototype.hasOwnProperty.call(ONBOARDING_SKILLS, skillName) ? ONBOARDING_SKILLS[skillName] : undefined;
    if (skill) return skill.body(ctx);
    const extra = this.invites.extraSkills?.().find((s) => s.name === skillName);
    if (!extra) throw notFound('Skill');
    return extra.markdown;
  }

  /**
   * Accepts the invite. A signed-in user becomes a member with the invite's role (membership
   * returned); an agent files a join request (returned with its claim secret, shown once).
   */
  @Post('invites/:token/accept')
  @NoActivity("the service records the join request it creates with the invite's company")
  @HttpCode(201)
  @Public()
  accept(
    @CurrentActor() actor: Actor | undefined,
    @Param('token') token: string,
    @Body() dto: AcceptInviteDto,
  ): Promise<AcceptedJoinRequestDto | object> {
    return this.joins.accept(actor, token, dto);
  }

  /** Whether a URL leads to this invite (token and origin); nothing is fetched. Query `url` required. */
  @Get('invites/:token/test-resolution')
  @Public()
  testResolution(@Param('token') token: string, @Query() q: TestResolutionQueryDto): Promise<TestResolutionResponseDto> {
    return this.invites.testResolution(token, q.url);
  }
}
