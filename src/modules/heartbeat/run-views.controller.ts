import { Controller, Get, Param, Query } from '@nestjs/common';
import { ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { Authorize } from '../../common/auth/authorize.decorator';
import { RouteCompany } from '../../common/auth/route-company.decorator';
import { ApiDomainErrors } from '../../common/errors/api-domain-errors.decorator';
import { ProviderTracesQueryDto, RunEventDto, RunEventsQueryDto, RunProviderTraceDto } from './dto/run-views.dto';
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
  events(
    @RouteCompany() companyId: string | undefined,
    @Param('runId') runId: string,
    @Query() q: RunEventsQueryDto,
  ): Promise<RunEventDto[]> {
    return this.views.events(companyId, runId, q.afterSeq, q.limit);
  }

  /**
   * Workspace operations of the run (checkouts, worktrees, setup commands the run's workspace
   * needed): runs here work in their project's workspace folder or the agent's own, prepared by no
   * operation of the run, so always [] (404 for a run the caller cannot see).
   */
  @Get('heartbeat-runs/:runId/workspace-operations')
  @Authorize({ callers: ['board', 'agent'] })
  @ApiOkResponse({ schema: { type: 'array', items: { type: 'object' }, maxItems: 0 } })
  async workspaceOperations(@RouteCompany() companyId: string | undefined, @Param('runId') runId: string): Promise<never[]> {
    await this.views.assertVisible(companyId, runId);
    return [];
  }

  /**
   * Raw provider-frame capture of runs: this service never records the frames a model API saw
   * (prompts, responses, credentials), so the list is always []; `runIds` is validated. A run's
   * OpenTelemetry trace is named by GET …/heartbeat-runs/{runId}/provider-trace.
   */
  @Get('companies/:companyId/provider-traces')
  @Authorize({ callers: ['board'] })
  @ApiOkResponse({ schema: { type: 'array', items: { type: 'object' }, maxItems: 0 } })
  providerTraces(@Query() _q: ProviderTracesQueryDto): never[] {
    return [];
  }

  /** The run's provider trace: no raw frames (`trace` null, `entries` []), and its OpenTelemetry trace id when it has one. */
  @Get('heartbeat-runs/:runId/provider-trace')
  @Authorize({ callers: ['board'] })
  providerTrace(@RouteCompany() companyId: string | undefined, @Param('runId') runId: string): Promise<RunProviderTraceDto> {
    return this.views.providerTrace(companyId, runId);
  }
}
