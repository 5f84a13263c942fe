import { ApiDomainErrors } from '../../common/errors/api-domain-errors.decorator';
import { USER_ERRORS } from './users.errors';
import { NoActivity } from '../../common/activity/log-activity.decorator';
import { Body, Controller, Get, HttpCode, Param, Patch, Post, Req, Res, UseGuards } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import type { FastifyReply as Response, FastifyRequest as Request } from 'fastify';
import type { Actor, BoardActor } from '../../common/auth/actor';
import { Authorize, Public } from '../../common/auth/authorize.decorator';
import { CurrentActor } from '../../common/auth/current-actor.decorator';
import { AppConfig } from '../../config/app-config';
import { AuthService, SignedIn } from './auth.service';
import { BoardTokensService } from './board-tokens.service';
import {
  BoardTokenResponseDto,
  CompanyUserProfileDto,
  CreateBoardTokenDto,
  CreatedBoardTokenDto,
  GetSessionDto,
  SignedInDto,
  SignInDto,
  SignUpDto,
  UpdateProfileDto,
} from './dto/auth.dto';
import { clientIp, LoginRateLimitGuard } from './login-rate-limiter';
import { clearSessionCookie, setSessionCookie } from './session-cookie';
import { toSessionResponse } from './sessions.repository';
import { UserResponseDto } from '../instance/user.types';

@ApiTags('auth')
@ApiDomainErrors(USER_ERRORS)
@Controller()
export class AuthController {
  constructor(
    private readonly auth: AuthService,
    private readonly tokens: BoardTokensService,
    private readonly config: AppConfig,
  ) {}

  private get secureCookies(): boolean {
    return this.config.publicUrl.startsWith('https:');
  }

  private signedIn(res: Response, s: SignedIn): SignedInDto {
    setSessionCookie(res, s.token, new Date(s.session.expiresAt), this.secureCookies);
    return { user: s.user, session: toSessionResponse(s.session), token: s.token };
  }

  /** Creates a user with email and password and signs it in (session cookie and token). 409 for a taken email. */
  @Post('auth/sign-up/email')
  @NoActivity('an account and session of the instance, outside any company')
  @HttpCode(201)
  @Public()
  async signUp(@Req() req: Request, @Res({ passthrough: true }) res: Response, @Body() dto: SignUpDto): Promise<SignedInDto> {
    return this.signedIn(res, await this.auth.signUp(dto, req.headers['user-agent']));
  }

  /** Email and password; a session cookie plus the token for `Authorization: Bearer`. 401 wrong credentials, 429 too many attempts. */
  @Post('auth/sign-in/email')
  @NoActivity('a session of the instance, outside any company')
  @HttpCode(200)
  @Public()
  @UseGuards(LoginRateLimitGuard)
  async signIn(@Req() req: Request, @Res({ passthrough: true }) res: Response, @Body() dto: SignInDto): Promise<SignedInDto> {
    return this.signedIn(res, await this.auth.signIn(dto, clientIp(req), req.headers['user-agent']));
  }

  /** Ends the calling session and clears the cookie. */
  @Post('auth/sign-out')
  @NoActivity('a session of the instance, outside any company')
  @HttpCode(200)
  @Public()
  signOut(
    @CurrentActor() actor: Actor | undefined,
    @Res({ passthrough: true }) res: Response,
  ): Promise<{ success: true; revoked: boolean }> {
    clearSessionCookie(res, this.secureCookies);
    return this.auth.signOut(actor);
  }

  /** The caller's session and user; nulls without a credential. The local board has a user but no session. */
  @Get('auth/get-session')
  @Public()
  getSession(@CurrentActor() actor: Actor | undefined): Promise<GetSessionDto> {
    return this.auth.getSession(actor);
  }

  /** The caller's profile (the local board: a built-in profile until edited). */
  @Get('auth/profile')
  @Authorize({ callers: ['board'] })
  profile(@CurrentActor() actor: BoardActor): Promise<UserResponseDto> {
    return this.auth.profile(actor);
  }

  /** Profile fields: `name`, `image`, `bio`. */
  @Patch('auth/profile')
  @NoActivity("the caller's own profile, outside any company")
  @Authorize({ callers: ['board'] })
  updateProfile(@CurrentActor() actor: BoardActor, @Body() dto: UpdateProfileDto): Promise<UserResponseDto> {
    return this.auth.updateProfile(actor, dto);
  }

  /** The caller's board API tokens (never the tokens themselves). */
  @Get('auth/board-tokens')
  @Authorize({ callers: ['board'] })
  listTokens(@CurrentActor() actor: BoardActor): Promise<BoardTokenResponseDto[]> {
    return this.tokens.list(actor);
  }

  /** A board API token for scripts; the token is shown once. 409 for the local board (it needs none). */
  @Post('auth/board-tokens')
  @NoActivity("the caller's own credential, outside any company (the token is never recorded)")
  @HttpCode(201)
  @Authorize({ callers: ['board'] })
  createToken(@CurrentActor() actor: BoardActor, @Body() dto: CreateBoardTokenDto): Promise<CreatedBoardTokenDto> {
    return this.tokens.create(actor, dto.name, dto.expiresInDays);
  }

  /** Revokes one of the caller's board tokens; it stops working at once. */
  @Post('auth/board-tokens/:tokenId/revoke')
  @NoActivity("the caller's own credential, outside any company")
  @HttpCode(200)
  @Authorize({ callers: ['board'] })
  revokeToken(@CurrentActor() actor: BoardActor, @Param('tokenId') tokenId: string): Promise<BoardTokenResponseDto> {
    return this.tokens.revoke(actor, tokenId);
  }

  /** A member's profile inside the company (by slug or user id); 404 for users without a membership there. */
  @Get('companies/:companyId/users/:userSlug/profile')
  @Authorize({ callers: ['board', 'agent'] })
  companyUserProfile(@Param('companyId') companyId: string, @Param('userSlug') userSlug: string): Promise<CompanyUserProfileDto> {
    return this.auth.companyUserProfile(companyId, userSlug);
  }
}
