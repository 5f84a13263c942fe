import { Controller, Get, Param, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import type { Actor } from '../../common/auth/actor';
import { Authorize } from '../../common/auth/authorize.decorator';
import { CurrentActor } from '../../common/auth/current-actor.decorator';
import { ApiDomainErrors } from '../../common/errors/api-domain-errors.decorator';
import { RunEventDto, RunEventsQueryDto } from './dto/run-views.dto';
import { HEARTBEAT_ERRORS } from './heartbeat.errors';
import { RunViewsService } from './run-views.service';

@ApiTags('heartbeat')
@ApiDomainErrors(HEARTBEAT_ERRORS)
@Controller()
export class RunViewsController {
  constructor(private readonly views: RunViewsService) {}

  /**
   * The run's events in order (`seq` 1, 2, …), after `afterSeq`: queued (source and reason),
   * started, the usage it reported, ended (status, exit code, error). Derived from the run record,
   * so a finished run keeps them; its output is the log (`…/log`).
   */
  @Get('heartbeat-runs/:runId/events')
  @Authorize({ callers: ['board', 'agent'] })
  events(@CurrentActor() actor: Actor, @Param('runId') runId: string, @Query() q: RunEventsQueryDto): Promise<RunEventDto[]> {
    return this.views.events(actor, runId, q.afterSeq, q.limit);
  }
}
