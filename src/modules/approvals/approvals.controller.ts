import { ApiDomainErrors } from '../../common/errors/api-domain-errors.decorator';
import { APPROVAL_ERRORS } from './approvals.errors';
import { Body, Controller, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { LogActivity } from '../../common/activity/log-activity.decorator';
import type { Actor } from '../../common/auth/actor';
import { Authorize } from '../../common/auth/authorize.decorator';
import { CurrentActor } from '../../common/auth/current-actor.decorator';
import { RouteCompany } from '../../common/auth/route-company.decorator';
import { ApprovalsService } from './approvals.service';
import { ApprovalResponseDto, DecideApprovalDto, ListApprovalsQueryDto } from './dto/approval.dto';

const decisionDetails = (c: { result: Record<string, unknown>; body: Record<string, unknown> }) => ({
  type: c.result.type,
  agentId: c.result.agentId,
  decisionNote: c.body.decisionNote ?? null,
});

@ApiTags('approvals')
@ApiDomainErrors(APPROVAL_ERRORS)
@Controller()
export class ApprovalsController {
  constructor(private readonly approvals: ApprovalsService) {}

  /** Approvals of the company, newest first; optional `status` and `type` filters. */
  @Get('companies/:companyId/approvals')
  @Authorize({ callers: ['board', 'agent'] })
  list(@Param('companyId') companyId: string, @Query() q: ListApprovalsQueryDto): Promise<ApprovalResponseDto[]> {
    return this.approvals.list(companyId, q);
  }

  /** One approval with its requested configuration snapshot. */
  @Get('approvals/:approvalId')
  @Authorize({ callers: ['board', 'agent'] })
  get(@RouteCompany() companyId: string | undefined, @Param('approvalId') approvalId: string): Promise<ApprovalResponseDto> {
    return this.approvals.get(companyId, approvalId);
  }

  /** Approves a pending approval; a hire's agent becomes idle. 409 when already decided. */
  @Post('approvals/:approvalId/approve')
  @HttpCode(200)
  @Authorize({ callers: ['board'] })
  @LogActivity('approval.approved', { entityType: 'approval', details: decisionDetails })
  approve(
    @CurrentActor() actor: Actor,
    @RouteCompany() companyId: string | undefined,
    @Param('approvalId') approvalId: string,
    @Body() dto: DecideApprovalDto,
  ): Promise<ApprovalResponseDto> {
    return this.approvals.approve(actor, companyId, approvalId, dto);
  }

  /** Rejects a pending approval; a hire's agent is terminated. 409 when already decided. */
  @Post('approvals/:approvalId/reject')
  @HttpCode(200)
  @Authorize({ callers: ['board'] })
  @LogActivity('approval.rejected', { entityType: 'approval', details: decisionDetails })
  reject(
    @CurrentActor() actor: Actor,
    @RouteCompany() companyId: string | undefined,
    @Param('approvalId') approvalId: string,
    @Body() dto: DecideApprovalDto,
  ): Promise<ApprovalResponseDto> {
    return this.approvals.reject(actor, companyId, approvalId, dto);
  }
}
