import { ApiDomainErrors } from '../../common/errors/api-domain-errors.decorator';
import { USER_ERRORS } from './users.errors';
import { NoActivity } from '../../common/activity/log-activity.decorator';
import { Controller, Get, HttpCode, Param, Post } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import type { Actor } from '../../common/auth/actor';
import { Authorize, Public } from '../../common/auth/authorize.decorator';
import { CurrentActor } from '../../common/auth/current-actor.decorator';
import { BoardClaimService } from './board-claim.service';
import { BoardClaimStatusDto } from './dto/auth.dto';
import { UserResponseDto } from '../instance/user.types';

@ApiTags('auth')
@ApiDomainErrors(USER_ERRORS)
@Controller('board-claim')
export class BoardClaimController {
  constructor(private readonly claims: BoardClaimService) {}

  /** A pending claim: status (pending, claimed, expired) and whether the caller is signed in. 404 unknown. */
  @Get(':token')
  @Public()
  inspect(@CurrentActor() actor: Actor | undefined, @Param('token') token: string): Promise<BoardClaimStatusDto> {
    return this.claims.inspect(actor, token);
  }

  /** Promotes the signed-in (session) user to instance owner. Works once: 409 after. */
  @Post(':token/claim')
  @NoActivity('instance ownership, outside any company')
  @HttpCode(200)
  @Authorize({ callers: ['board'] })
  claim(@CurrentActor() actor: Actor, @Param('token') token: string): Promise<UserResponseDto> {
    return this.claims.claim(actor, token);
  }
}
