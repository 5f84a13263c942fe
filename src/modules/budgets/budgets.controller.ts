import { ApiDomainErrors } from '../../common/errors/api-domain-errors.decorator';
import { BUDGET_ERRORS } from './budgets.errors';
import { Body, Controller, Get, HttpCode, Param, Patch, Post, Query, Res } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import type { FastifyReply as Response } from 'fastify';
import { LogActivity, NoActivity } from '../../common/activity/log-activity.decorator';
import type { Actor } from '../../common/auth/actor';
import { Authorize } from '../../common/auth/authorize.decorator';
import { CurrentActor } from '../../common/auth/current-actor.decorator';
import { BudgetIncidentsService } from './budget-incidents.service';
import { BudgetPoliciesService } from './budget-policies.service';
import {
  BudgetIncidentResponseDto,
  BudgetOverviewResponseDto,
  BudgetPolicyResponseDto,
  BudgetUpdateResponseDto,
  ListIncidentsQueryDto,
  ResolveIncidentDto,
  ResolveIncidentResponseDto,
  UpdateBudgetDto,
  UpsertBudgetPolicyDto,
} from './dto/budget.dto';

@ApiTags('budgets')
@ApiDomainErrors(BUDGET_ERRORS)
@Controller()
export class BudgetsController {
  constructor(
    private readonly policies: BudgetPoliciesService,
    private readonly incidents: BudgetIncidentsService,
  ) {}

  /** Sets the company's budgetMonthlyCents and syncs its calendar-month UTC billed_cents policy. */
  @Patch('companies/:companyId/budgets')
  @Authorize({ callers: ['board'] })
  @LogActivity('company.budget_updated', { entityType: 'company' })
  setCompanyBudget(@Param('companyId') companyId: string, @Body() dto: UpdateBudgetDto): Promise<BudgetUpdateResponseDto> {
    return this.policies.setCompanyBudget(companyId, dto.budgetMonthlyCents);
  }

  /** Policies with their observed value, active incidents, paused agent and project counts, pending approvals. */
  @Get('companies/:companyId/budgets/overview')
  @Authorize({ callers: ['board', 'agent'] })
  overview(@Param('companyId') companyId: string): Promise<BudgetOverviewResponseDto> {
    return this.policies.overview(companyId);
  }

  /** Upserts the policy of (scopeType, scopeId, metric, windowKind): 201 when created, 200 when updated. */
  @Post('companies/:companyId/budgets/policies')
  @Authorize({ callers: ['board'] })
  @LogActivity('budget.policy_upserted', { entityType: 'budget_policy' })
  async upsertPolicy(
    @Param('companyId') companyId: string,
    @Body() dto: UpsertBudgetPolicyDto,
    @Res({ passthrough: true }) res: Response,
  ): Promise<BudgetPolicyResponseDto> {
    const { policy, created } = await this.policies.upsert(companyId, dto);
    res.status(created ? 201 : 200);
    return policy;
  }

  /** Incidents newest first; `status` = open, resolved, or active (open or still holding). */
  @Get('companies/:companyId/budget-incidents')
  @Authorize({ callers: ['board', 'agent'] })
  listIncidents(@Param('companyId') companyId: string, @Query() q: ListIncidentsQueryDto): Promise<BudgetIncidentResponseDto[]> {
    return this.incidents.list(companyId, q.status);
  }

  /** keep_paused, or raise_budget_and_resume with `amount` above the observed value (422 otherwise). */
  @Post('companies/:companyId/budget-incidents/:incidentId/resolve')
  @NoActivity('the service records budget.incident_resolved with the resolution it applied')
  @HttpCode(200)
  @Authorize({ callers: ['board'] })
  resolveIncident(
    @CurrentActor() actor: Actor,
    @Param('companyId') companyId: string,
    @Param('incidentId') incidentId: string,
    @Body() dto: ResolveIncidentDto,
  ): Promise<ResolveIncidentResponseDto> {
    return this.incidents.resolve(actor, companyId, incidentId, dto);
  }
}
