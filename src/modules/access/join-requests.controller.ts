import { ApiDomainErrors } from '../../common/errors/api-domain-errors.decorator';
import { ACCESS_ERRORS } from './access.errors';
import { Body, Controller, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { LogActivity, NoActivity } from '../../common/activity/log-activity.decorator';
import type { Actor } from '../../common/auth/actor';
import { Authorize, Public } from '../../common/auth/authorize.decorator';
import { CurrentActor } from '../../common/auth/current-actor.decorator';
import {
  ClaimApiKeyDto,
  ClaimedApiKeyDto,
  DecideJoinRequestDto,
  JoinRequestResponseDto,
  ListJoinRequestsQueryDto,
} from './dto/join-request.dto';
import { JoinRequestsService } from './join-requests.service';

const decisionDetails = (c: { result: Record<string, unknown> }) => ({
  requestType: c.result.requestType,
  createdAgentId: c.result.createdAgentId,
  note: c.result.decisionNote,
});

@ApiTags('join-requests')
@ApiDomainErrors(ACCESS_ERRORS)
@Controller()
export class JoinRequestsController {
  constructor(private readonly joins: JoinRequestsService) {}

  /** Join requests, newest first; `status` (`pending` = `pending_approval`) and `request-type` filters. Needs `joins:approve`. */
  @Get('companies/:companyId/join-requests')
  @Authorize({ callers: ['board', 'agent'] })
  list(
    @CurrentActor() actor: Actor,
    @Param('companyId') companyId: string,
    @Query() q: ListJoinRequestsQueryDto,
  ): Promise<JoinRequestResponseDto[]> {
    return this.joins.list(actor, companyId, q.status, q['request-type'] ?? q.requestType);
  }

  /** Approves a pending request (409 otherwise); an agent request creates the agent. Needs `joins:approve`. */
  @Post('companies/:companyId/join-requests/:requestId/approve')
  @HttpCode(200)
  @Authorize({ callers: ['board', 'agent'] })
  @LogActivity('join_request.approved', { entityType: 'join_request', details: decisionDetails })
  approve(
    @CurrentActor() actor: Actor,
    @Param('companyId') companyId: string,
    @Param('requestId') requestId: string,
    @Body() dto: DecideJoinRequestDto,
  ): Promise<JoinRequestResponseDto> {
    return this.joins.approve(actor, companyId, requestId, dto.note);
  }

  /** Rejects a pending request (409 otherwise). Needs `joins:approve`. */
  @Post('companies/:companyId/join-requests/:requestId/reject')
  @HttpCode(200)
  @Authorize({ callers: ['board', 'agent'] })
  @LogActivity('join_request.rejected', { entityType: 'join_request', details: decisionDetails })
  reject(
    @CurrentActor() actor: Actor,
    @Param('companyId') companyId: string,
    @Param('requestId') requestId: string,
    @Body() dto: DecideJoinRequestDto,
  ): Promise<JoinRequestResponseDto> {
    return this.joins.reject(actor, companyId, requestId, dto.note);
  }

  /** Exchanges the claim secret of an approved agent request for an agent API key, once (409 after). */
  @Post('join-requests/:requestId/claim-api-key')
  @NoActivity("the service records the key claim with the request's company (never the key)")
  @HttpCode(201)
  @Public()
  claim(@Param('requestId') requestId: string, @Body() dto: ClaimApiKeyDto): Promise<ClaimedApiKeyDto> {
    return this.joins.claimApiKey(requestId, dto.claimSecret);
  }
}
