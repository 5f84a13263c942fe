import { ApiDomainErrors } from '../../common/errors/api-domain-errors.decorator';
import { DOCUMENT_ERRORS } from './documents.errors';
import { Body, Controller, Get, HttpCode, Param, Post } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { LogActivity } from '../../common/activity/log-activity.decorator';
import type { Actor } from '../../common/auth/actor';
import { Authorize } from '../../common/auth/authorize.decorator';
import { CurrentActor } from '../../common/auth/current-actor.decorator';
import { RouteCompany } from '../../common/auth/route-company.decorator';
import { AcceptPlanDto, PlanDecompositionDto } from './dto/plan-decomposition.dto';
import { PlanDecompositions } from './plan-decompositions.service';

@ApiTags('documents')
@ApiDomainErrors(DOCUMENT_ERRORS)
@Controller()
export class PlanDecompositionsController {
  constructor(private readonly plans: PlanDecompositions) {}

  /**
   * The board accepts the issue's `plan` document at its latest revision (`baseRevisionId`: 409 if
   * the plan changed since): each top-level list item becomes a child issue. 404 without a plan, 409
   * when the revision was accepted already, 422 when it has no list items.
   */
  @Post('issues/:issueId/plan/accept')
  @HttpCode(201)
  @Authorize({ callers: ['board'] })
  @LogActivity('issue.plan_accepted', {
    entityType: 'issue',
    entityId: (c) => c.result.issueId as string,
    details: (c) => ({
      decompositionId: c.result.id,
      revisionId: c.result.revisionId,
      revisionNumber: c.result.revisionNumber,
      childIssueIds: (c.result.childIssues as Array<{ id: string }>).map((i) => i.id),
    }),
  })
  accept(
    @CurrentActor() actor: Actor,
    @RouteCompany() routeCompanyId: string | undefined,
    @Param('issueId') issueId: string,
    @Body() dto: AcceptPlanDto,
  ): Promise<PlanDecompositionDto> {
    return this.plans.accept(actor, routeCompanyId, issueId, dto);
  }

  /** Child issues created from plans the board accepted, newest acceptance first. */
  @Get('issues/:issueId/accepted-plan-decompositions')
  @Authorize({ callers: ['board', 'agent'] })
  list(@RouteCompany() routeCompanyId: string | undefined, @Param('issueId') issueId: string): Promise<PlanDecompositionDto[]> {
    return this.plans.list(routeCompanyId, issueId);
  }
}
