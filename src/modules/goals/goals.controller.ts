import { ApiDomainErrors } from '../../common/errors/api-domain-errors.decorator';
import { GOAL_ERRORS } from './goals.errors';
import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { LogActivity } from '../../common/activity/log-activity.decorator';
import { Authorize } from '../../common/auth/authorize.decorator';
import { RouteCompany } from '../../common/auth/route-company.decorator';
import { CreateGoalDto, GoalResponseDto, UpdateGoalDto } from './dto/goal.dto';
import { GoalsService } from './goals.service';

@ApiTags('goals')
@ApiDomainErrors(GOAL_ERRORS)
@Controller()
export class GoalsController {
  constructor(private readonly goals: GoalsService) {}

  /** All goals of the company, oldest first. */
  @Get('companies/:companyId/goals')
  @Authorize({ callers: ['board', 'agent'] })
  list(@Param('companyId') companyId: string): Promise<GoalResponseDto[]> {
    return this.goals.list(companyId);
  }

  /** The company default goal: the goal flagged `isCompanyDefault`, else the oldest `company`-level goal; 404 when none. */
  @Get('companies/:companyId/goals/default')
  @Authorize({ callers: ['board', 'agent'] })
  companyDefault(@Param('companyId') companyId: string): Promise<GoalResponseDto> {
    return this.goals.getCompanyDefault(companyId);
  }

  /** Level defaults to `task`, status to `planned`; parent and owner agent must be of the company. */
  @Post('companies/:companyId/goals')
  @HttpCode(201)
  @Authorize({ callers: ['board', 'agent'] })
  @LogActivity('goal.created', { entityType: 'goal' })
  create(@Param('companyId') companyId: string, @Body() dto: CreateGoalDto): Promise<GoalResponseDto> {
    return this.goals.create(companyId, dto);
  }

  /** The guard resolves the goal's company: 404 for an unknown goal and another company's alike. */
  @Get('goals/:goalId')
  @Authorize({ callers: ['board', 'agent'] })
  get(@RouteCompany() companyId: string | undefined, @Param('goalId') goalId: string): Promise<GoalResponseDto> {
    return this.goals.get(companyId, goalId);
  }

  /** Partial update: omitted fields stay unchanged; a new parent must not create a cycle. */
  @Patch('goals/:goalId')
  @Authorize({ callers: ['board', 'agent'] })
  @LogActivity('goal.updated', { entityType: 'goal' })
  update(
    @RouteCompany() companyId: string | undefined,
    @Param('goalId') goalId: string,
    @Body() dto: UpdateGoalDto,
  ): Promise<GoalResponseDto> {
    return this.goals.update(companyId, goalId, dto);
  }

  /** Returns the deleted row; children move up to its parent, linked projects lose the link. */
  @Delete('goals/:goalId')
  @Authorize({ callers: ['board', 'agent'] })
  @LogActivity('goal.deleted', { entityType: 'goal', details: (c) => ({ title: c.result.title }) })
  remove(@RouteCompany() companyId: string | undefined, @Param('goalId') goalId: string): Promise<GoalResponseDto> {
    return this.goals.remove(companyId, goalId);
  }
}
