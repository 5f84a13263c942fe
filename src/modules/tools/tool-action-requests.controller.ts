import { Body, Controller, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { LogActivity } from '../../common/activity/log-activity.decorator';
import type { Actor } from '../../common/auth/actor';
import { Authorize } from '../../common/auth/authorize.decorator';
import { CurrentActor } from '../../common/auth/current-actor.decorator';
import { RouteCompany } from '../../common/auth/route-company.decorator';
import { ApiDomainErrors } from '../../common/errors/api-domain-errors.decorator';
import {
  ActionRequestDto,
  ActionRequestListDto,
  ApproveActionRequestDto,
  DeclineActionRequestDto,
  ListActionRequestsQueryDto,
} from './dto/tool-action-request.dto';
import { ToolActionRequestsService } from './tool-action-requests.service';
import { TOOL_ERRORS } from './tools.errors';

const decision = (c: { result: Record<string, unknown> }) => ({
  connectionId: c.result.connectionId,
  toolName: c.result.toolName,
  agentId: c.result.agentId,
  runId: c.result.runId,
  status: c.result.status,
  reason: c.result.decisionReason ?? null,
});

@ApiTags('tools')
@ApiDomainErrors(TOOL_ERRORS)
@Controller()
export class ToolActionRequestsController {
  constructor(private readonly requests: ToolActionRequestsService) {}

  /**
   * Calls of "ask" tools waiting for the board (`status=pending`, the default), or decided ones. A
   * pending request past its connection's `approvalTimeoutSec` reads as `expired` (by the
   * database's clock) and can no longer be decided.
   */
  @Get('companies/:companyId/tools/action-requests')
  @Authorize({ callers: ['board'] })
  async list(@Param('companyId') companyId: string, @Query() q: ListActionRequestsQueryDto): Promise<ActionRequestListDto> {
    return { actionRequests: await this.requests.list(companyId, q.status ?? 'pending', q.limit ?? 100) };
  }

  /** Allows this one call: the agent's waiting call runs, or its next identical call does. 409 when decided or expired. */
  @Post('tool-gateway/action-requests/:requestId/approve')
  @HttpCode(200)
  @Authorize({ callers: ['board'] })
  @LogActivity('tool.approval_granted', { entityType: 'tool_action_request', details: decision })
  approve(
    @CurrentActor() actor: Actor,
    @RouteCompany() routeCompanyId: string | undefined,
    @Param('requestId') id: string,
    @Body() dto: ApproveActionRequestDto,
  ): Promise<ActionRequestDto> {
    return this.requests.approve(actor, routeCompanyId, id, dto);
  }

  /** Refuses the call: the agent gets a tool error with the reason. 409 when decided or expired. */
  @Post('tool-gateway/action-requests/:requestId/decline')
  @HttpCode(200)
  @Authorize({ callers: ['board'] })
  @LogActivity('tool.approval_declined', { entityType: 'tool_action_request', details: decision })
  decline(
    @CurrentActor() actor: Actor,
    @RouteCompany() routeCompanyId: string | undefined,
    @Param('requestId') id: string,
    @Body() dto: DeclineActionRequestDto,
  ): Promise<ActionRequestDto> {
    return this.requests.decline(actor, routeCompanyId, id, dto);
  }
}
