import { ApiDomainErrors } from '../../common/errors/api-domain-errors.decorator';
import { HEARTBEAT_ERRORS } from './heartbeat.errors';
import { NoActivity } from '../../common/activity/log-activity.decorator';
import { Body, Controller, Get, HttpCode, Param, Post, Query, Res } from '@nestjs/common';
import type { FastifyReply as Response } from 'fastify';
import { ApiAcceptedResponse, ApiExtraModels, ApiOkResponse, ApiTags, getSchemaPath } from '@nestjs/swagger';
import type { Actor } from '../../common/auth/actor';
import { Authorize } from '../../common/auth/authorize.decorator';
import { CurrentActor } from '../../common/auth/current-actor.decorator';
import { RouteCompany } from '../../common/auth/route-company.decorator';
import { AgentWakeupService } from './agent-wakeup.service';
import {
  CompleteRunDto,
  HeldWakeupDto,
  InvokeQueryDto,
  ListRunsQueryDto,
  LiveRunDto,
  LiveRunsQueryDto,
  RunLogQueryDto,
  RunLogResponseDto,
  RunResponseDto,
  SchedulerHeartbeatDto,
  SkippedWakeupDto,
  WakeupDto,
  WakeupRunResponseDto,
} from './dto/heartbeat.dto';
import { HeartbeatRunsService } from './heartbeat-runs.service';
import type { RunResponse } from './heartbeat.types';

/** What a wake answers (202): the run it queued or joined, or why it was skipped or held. */
const WAKE_OUTCOME = {
  schema: {
    oneOf: [
      { $ref: getSchemaPath(WakeupRunResponseDto) },
      { $ref: getSchemaPath(SkippedWakeupDto) },
      { $ref: getSchemaPath(HeldWakeupDto) },
    ],
  },
};

@ApiTags('heartbeat')
@ApiExtraModels(WakeupRunResponseDto, SkippedWakeupDto, HeldWakeupDto)
@ApiDomainErrors(HEARTBEAT_ERRORS)
@Controller()
export class HeartbeatController {
  constructor(
    private readonly runs: HeartbeatRunsService,
    private readonly wakeups: AgentWakeupService,
  ) {}

  /** 202 with the run record (queued, coalesced, or the live run a deferred wake waits for), `{ skipped: true, reason }`, or `{ deferred: true, reason: 'issue_tree_held', holdId }` while the subtree is paused. 409 for paused, terminated or pending_approval agents; agents wake only themselves. */
  @Post('agents/:agentId/wakeup')
  @NoActivity('the wakeup queue records the wake (or its coalescing) with its outcome')
  @HttpCode(202)
  @Authorize({ callers: ['board', 'agent'] })
  @ApiAcceptedResponse(WAKE_OUTCOME)
  wake(
    @CurrentActor() actor: Actor,
    @RouteCompany() companyId: string | undefined,
    @Param('agentId') agentId: string,
    @Body() dto: WakeupDto,
  ): Promise<WakeupRunResponseDto | SkippedWakeupDto | HeldWakeupDto> {
    return this.wakeups.wake(actor, companyId, agentId, dto);
  }

  /**
   * The board UI's "Run now": an on-demand, manual wake of the agent (the same as `POST …/wakeup`
   * with `{ source: "on_demand", triggerDetail: "manual" }`); `companyId` in the query is accepted
   * and not needed. 202 with the run record (the UI opens it), or a skip or hold as for a wakeup.
   */
  @Post('agents/:agentId/heartbeat/invoke')
  @NoActivity('the wakeup queue records the wake (or its coalescing) with its outcome')
  @HttpCode(202)
  @Authorize({ callers: ['board'] })
  @ApiAcceptedResponse(WAKE_OUTCOME)
  invoke(
    @CurrentActor() actor: Actor,
    @RouteCompany() companyId: string | undefined,
    @Param('agentId') agentId: string,
    @Query() _q: InvokeQueryDto,
  ): Promise<WakeupRunResponseDto | SkippedWakeupDto | HeldWakeupDto> {
    return this.wakeups.wake(actor, companyId, agentId, { source: 'on_demand', triggerDetail: 'manual' });
  }

  /** Runs of a company, newest first; filters agentId, status, issueId; keyset pages: pass the `X-Next-Cursor` header of a page as `cursor`. */
  @Get('companies/:companyId/heartbeat-runs')
  @Authorize({ callers: ['board', 'agent'] })
  @ApiOkResponse({
    type: [RunResponseDto],
    headers: { 'X-Next-Cursor': { description: 'cursor of the next page; absent on the last page', schema: { type: 'string' } } },
  })
  async list(
    @Param('companyId') companyId: string,
    @Query() q: ListRunsQueryDto,
    @Res({ passthrough: true }) res: Response,
  ): Promise<RunResponseDto[]> {
    const page = await this.runs.list(companyId, q);
    if (page.nextCursor) res.header('X-Next-Cursor', page.nextCursor);
    return page.items;
  }

  /**
   * Queued and running runs of the company, newest first, with agent name, adapter type, trigger,
   * start and last output time; with `minCount`, topped up with the most recent ended runs.
   */
  @Get('companies/:companyId/live-runs')
  @Authorize({ callers: ['board', 'agent'] })
  liveRuns(@Param('companyId') companyId: string, @Query() q: LiveRunsQueryDto): Promise<LiveRunDto[]> {
    return this.runs.live(companyId, q.limit ?? 200, undefined, q.minCount ?? 0);
  }

  /** One run: status, why it ended (errorCode, error, exitCode), usage, result, log location. */
  @Get('heartbeat-runs/:runId')
  @Authorize({ callers: ['board', 'agent'] })
  get(@RouteCompany() companyId: string | undefined, @Param('runId') runId: string): Promise<RunResponse> {
    return this.runs.get(companyId, runId);
  }

  /** The run's NDJSON log from a byte offset (tail by passing the previous nextOffset). */
  @Get('heartbeat-runs/:runId/log')
  @Authorize({ callers: ['board', 'agent'] })
  log(
    @RouteCompany() companyId: string | undefined,
    @Param('runId') runId: string,
    @Query() q: RunLogQueryDto,
  ): Promise<RunLogResponseDto> {
    return this.runs.readLog(companyId, runId, q.offset ?? 0, q.limitBytes ?? 65536);
  }

  /** Cancels a queued or running run (the board, or the run's own agent): its process group is killed, an async remote is abandoned. 409 if it already ended. */
  @Post('heartbeat-runs/:runId/cancel')
  @NoActivity('the run lifecycle records heartbeat.run_cancelled when it ends the run')
  @HttpCode(200)
  @Authorize({ callers: ['board', 'agent'] })
  cancel(@CurrentActor() actor: Actor, @RouteCompany() companyId: string | undefined, @Param('runId') runId: string): Promise<RunResponse> {
    return this.runs.cancel(actor, companyId, runId);
  }

  /** Completion callback of async adapters, authenticated as the run (run token): `{ status, summary, usage, costCents }`. */
  @Post('heartbeat-runs/:runId/complete')
  @NoActivity('the run lifecycle records heartbeat.run_<status> when it ends the run')
  @HttpCode(200)
  @Authorize({ callers: ['agent'] })
  complete(
    @CurrentActor() actor: Actor,
    @RouteCompany() companyId: string | undefined,
    @Param('runId') runId: string,
    @Body() dto: CompleteRunDto,
  ): Promise<RunResponse> {
    return this.runs.complete(actor, companyId, runId, dto);
  }

  /** Agents with timer heartbeats: interval, next due time, last run. */
  @Get('instance/scheduler-heartbeats')
  @Authorize({ callers: ['board'] })
  schedulerHeartbeats(@CurrentActor() actor: Actor): Promise<SchedulerHeartbeatDto[]> {
    return this.runs.schedulerHeartbeats(actor);
  }
}
