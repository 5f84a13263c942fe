import { ApiDomainErrors } from '../../common/errors/api-domain-errors.decorator';
import { COST_ERRORS } from './costs.errors';
import { NoActivity } from '../../common/activity/log-activity.decorator';
import { Body, Controller, Get, Param, Post, Query, Res } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import type { FastifyReply as Response } from 'fastify';
import type { Actor } from '../../common/auth/actor';
import { Authorize } from '../../common/auth/authorize.decorator';
import { CurrentActor } from '../../common/auth/current-actor.decorator';
import { CostEventsService } from './cost-events.service';
import { CostReportsService } from './cost-reports.service';
import {
  CostByAgentModelRowDto,
  CostByAgentRowDto,
  CostByBillerRowDto,
  CostByProjectRowDto,
  CostByProviderRowDto,
  CostEventResponseDto,
  CostRangeQueryDto,
  CostSummaryResponseDto,
  CreateCostEventDto,
  QuotaWindowsResponseDto,
  WindowSpendResponseDto,
} from './dto/cost-event.dto';

@ApiTags('costs')
@ApiDomainErrors(COST_ERRORS)
@Controller('companies/:companyId')
export class CostsController {
  constructor(
    private readonly events: CostEventsService,
    private readonly reports: CostReportsService,
  ) {}

  /** Stores a cost event (201; a duplicate returns the original with 200), updates spend, enforces budgets. */
  @Post('cost-events')
  @NoActivity('the service records cost.reported with the COMMIT (a duplicate writes none)')
  @Authorize({ callers: ['board', 'agent'], acceptsEndedRun: true })
  async report(
    @CurrentActor() actor: Actor,
    @Param('companyId') companyId: string,
    @Body() dto: CreateCostEventDto,
    @Res({ passthrough: true }) res: Response,
  ): Promise<CostEventResponseDto> {
    const { event, created } = await this.events.report(actor, companyId, dto);
    res.status(created ? 201 : 200);
    return event;
  }

  /** spendCents, budgetCents, utilizationPercent (and token sums) for from/to, or all time. */
  @Get('costs/summary')
  @Authorize({ callers: ['board', 'agent'] })
  summary(@Param('companyId') companyId: string, @Query() q: CostRangeQueryDto): Promise<CostSummaryResponseDto> {
    return this.reports.summary(companyId, q);
  }

  /** One row per agent, biggest spend first. */
  @Get('costs/by-agent')
  @Authorize({ callers: ['board', 'agent'] })
  byAgent(@Param('companyId') companyId: string, @Query() q: CostRangeQueryDto): Promise<CostByAgentRowDto[]> {
    return this.reports.byAgent(companyId, q);
  }

  /** One row per agent, provider and model. */
  @Get('costs/by-agent-model')
  @Authorize({ callers: ['board', 'agent'] })
  byAgentModel(@Param('companyId') companyId: string, @Query() q: CostRangeQueryDto): Promise<CostByAgentModelRowDto[]> {
    return this.reports.byAgentModel(companyId, q);
  }

  /** One row per provider. */
  @Get('costs/by-provider')
  @Authorize({ callers: ['board', 'agent'] })
  byProvider(@Param('companyId') companyId: string, @Query() q: CostRangeQueryDto): Promise<CostByProviderRowDto[]> {
    return this.reports.byProvider(companyId, q);
  }

  /** One row per biller. */
  @Get('costs/by-biller')
  @Authorize({ callers: ['board', 'agent'] })
  byBiller(@Param('companyId') companyId: string, @Query() q: CostRangeQueryDto): Promise<CostByBillerRowDto[]> {
    return this.reports.byBiller(companyId, q);
  }

  /** One row per project; projectId null collects unattributed events. */
  @Get('costs/by-project')
  @Authorize({ callers: ['board', 'agent'] })
  byProject(@Param('companyId') companyId: string, @Query() q: CostRangeQueryDto): Promise<CostByProjectRowDto[]> {
    return this.reports.byProject(companyId, q);
  }

  /** Rolling spend of the last 5h, 24h and 7d. */
  @Get('costs/window-spend')
  @Authorize({ callers: ['board', 'agent'] })
  windowSpend(@Param('companyId') companyId: string): Promise<WindowSpendResponseDto> {
    return this.reports.windowSpend(companyId);
  }

  /** Board diagnostics: rolling windows per provider and biller, with when capacity frees up. */
  @Get('costs/quota-windows')
  @Authorize({ callers: ['board'] })
  quotaWindows(@Param('companyId') companyId: string): Promise<QuotaWindowsResponseDto> {
    return this.reports.quotaWindows(companyId);
  }
}
