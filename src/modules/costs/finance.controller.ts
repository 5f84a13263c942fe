import { ApiDomainErrors } from '../../common/errors/api-domain-errors.decorator';
import { COST_ERRORS } from './costs.errors';
import { NoActivity } from '../../common/activity/log-activity.decorator';
import { Body, Controller, Get, Param, Post, Query, Res } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import type { FastifyReply as Response } from 'fastify';
import type { Actor } from '../../common/auth/actor';
import { Authorize } from '../../common/auth/authorize.decorator';
import { CurrentActor } from '../../common/auth/current-actor.decorator';
import { CostRangeQueryDto } from './dto/cost-event.dto';
import {
  CreateFinanceEventDto,
  FinanceByBillerRowDto,
  FinanceByKindRowDto,
  FinanceEventResponseDto,
  FinanceSummaryResponseDto,
  ListFinanceEventsQueryDto,
} from './dto/finance-event.dto';
import { FinanceService } from './finance.service';

@ApiTags('costs')
@ApiDomainErrors(COST_ERRORS)
@Controller('companies/:companyId')
export class FinanceController {
  constructor(private readonly finance: FinanceService) {}

  /** Board-only. 201; a repeated idempotencyKey returns the original with 200. */
  @Post('finance-events')
  @NoActivity('the service records the finance event in the same transaction')
  @Authorize({ callers: ['board'] })
  async create(
    @CurrentActor() actor: Actor,
    @Param('companyId') companyId: string,
    @Body() dto: CreateFinanceEventDto,
    @Res({ passthrough: true }) res: Response,
  ): Promise<FinanceEventResponseDto> {
    const { event, created } = await this.finance.create(actor, companyId, dto);
    res.status(created ? 201 : 200);
    return event;
  }

  /** Newest first; `limit` 1..500 (default 100). */
  @Get('costs/finance-events')
  @Authorize({ callers: ['board'] })
  list(@Param('companyId') companyId: string, @Query() q: ListFinanceEventsQueryDto): Promise<FinanceEventResponseDto[]> {
    return this.finance.list(companyId, q);
  }

  /** Debit, credit, net and estimated sums per currency. */
  @Get('costs/finance-summary')
  @Authorize({ callers: ['board'] })
  summary(@Param('companyId') companyId: string, @Query() q: CostRangeQueryDto): Promise<FinanceSummaryResponseDto> {
    return this.finance.summary(companyId, q);
  }

  /** Sums per biller and currency. */
  @Get('costs/finance-by-biller')
  @Authorize({ callers: ['board'] })
  byBiller(@Param('companyId') companyId: string, @Query() q: CostRangeQueryDto): Promise<FinanceByBillerRowDto[]> {
    return this.finance.byBiller(companyId, q);
  }

  /** Sums per kind and currency. */
  @Get('costs/finance-by-kind')
  @Authorize({ callers: ['board'] })
  byKind(@Param('companyId') companyId: string, @Query() q: CostRangeQueryDto): Promise<FinanceByKindRowDto[]> {
    return this.finance.byKind(companyId, q);
  }
}
