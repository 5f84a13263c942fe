import { ApiDomainErrors } from '../../common/errors/api-domain-errors.decorator';
import { ROUTINE_ERRORS } from './routines.errors';
import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { ActivityContext, LogActivity } from '../../common/activity/log-activity.decorator';
import type { Actor } from '../../common/auth/actor';
import { Authorize } from '../../common/auth/authorize.decorator';
import { CurrentActor } from '../../common/auth/current-actor.decorator';
import { RouteCompany } from '../../common/auth/route-company.decorator';
import {
  CreateRoutineDto,
  CreateTriggerDto,
  ListRunsQueryDto,
  RoutineDetailResponseDto,
  RoutineResponseDto,
  RoutineRunResponseDto,
  TriggerResponseDto,
  UpdateRoutineDto,
  UpdateTriggerDto,
} from './dto/routine.dto';
import { RoutinesService } from './routines.service';

const noDetails = () => ({});
const triggerActivity = (action: string) =>
  LogActivity(action, {
    entityType: 'routine',
    entityId: (c: ActivityContext) => c.result.routineId as string,
    details: (c: ActivityContext) => ({
      triggerId: c.result.id,
      kind: c.result.kind,
      cronExpression: c.result.cronExpression,
      timezone: c.result.timezone,
      enabled: c.result.enabled,
    }),
  });

@ApiTags('routines')
@ApiDomainErrors(ROUTINE_ERRORS)
@Controller()
export class RoutinesController {
  constructor(private readonly routines: RoutinesService) {}

  /** Routines of the company, oldest first, each with its triggers, last execution and open issue. */
  @Get('companies/:companyId/routines')
  @Authorize({ callers: ['board', 'agent'] })
  list(@Param('companyId') companyId: string): Promise<RoutineResponseDto[]> {
    return this.routines.listForCompany(companyId);
  }

  /**
   * A routine: recurring work for an agent. Each firing (cron trigger in a time zone, or run now)
   * creates an issue with `originKind: routine_execution` assigned to the routine's agent. Needs
   * task-assignment permission for that agent.
   */
  @Post('companies/:companyId/routines')
  @HttpCode(201)
  @Authorize({ callers: ['board', 'agent'] })
  @LogActivity('routine.created', { entityType: 'routine' })
  create(
    @CurrentActor() actor: Actor,
    @Param('companyId') companyId: string,
    @Body() dto: CreateRoutineDto,
  ): Promise<RoutineDetailResponseDto> {
    return this.routines.create(actor, companyId, dto);
  }

  /** One routine with its triggers, assignee, recent executions and open issue. */
  @Get('routines/:routineId')
  @Authorize({ callers: ['board', 'agent'] })
  get(@RouteCompany() companyId: string | undefined, @Param('routineId') routineId: string): Promise<RoutineDetailResponseDto> {
    return this.routines.get(companyId, routineId);
  }

  /** Partial update; `status` pauses or resumes like the dedicated routes. */
  @Patch('routines/:routineId')
  @Authorize({ callers: ['board', 'agent'] })
  @LogActivity('routine.updated', { entityType: 'routine' })
  update(
    @CurrentActor() actor: Actor,
    @RouteCompany() companyId: string | undefined,
    @Param('routineId') routineId: string,
    @Body() dto: UpdateRoutineDto,
  ): Promise<RoutineDetailResponseDto> {
    return this.routines.update(actor, companyId, routineId, dto);
  }

  /** Deletes the routine with its triggers and execution records (the issues stay); 409 for a built-in agent's routine. */
  @Delete('routines/:routineId')
  @Authorize({ callers: ['board', 'agent'] })
  @LogActivity('routine.deleted', { entityType: 'routine', details: (c) => ({ title: c.result.title }) })
  remove(
    @CurrentActor() actor: Actor,
    @RouteCompany() companyId: string | undefined,
    @Param('routineId') routineId: string,
  ): Promise<RoutineResponseDto> {
    return this.routines.remove(actor, companyId, routineId);
  }

  /** No trigger fires while paused; run now still works. */
  @Post('routines/:routineId/pause')
  @HttpCode(200)
  @Authorize({ callers: ['board', 'agent'] })
  @LogActivity('routine.paused', { entityType: 'routine', details: noDetails })
  pause(
    @CurrentActor() actor: Actor,
    @RouteCompany() companyId: string | undefined,
    @Param('routineId') routineId: string,
  ): Promise<RoutineDetailResponseDto> {
    return this.routines.pause(actor, companyId, routineId);
  }

  /** Schedules restart from now: firings missed while paused are not owed. */
  @Post('routines/:routineId/resume')
  @HttpCode(200)
  @Authorize({ callers: ['board', 'agent'] })
  @LogActivity('routine.resumed', { entityType: 'routine', details: noDetails })
  resume(
    @CurrentActor() actor: Actor,
    @RouteCompany() companyId: string | undefined,
    @Param('routineId') routineId: string,
  ): Promise<RoutineDetailResponseDto> {
    return this.routines.resume(actor, companyId, routineId);
  }

  /** One execution now (202): the execution record, `issue_created`, or `skipped` while the previous issue is open (skip_if_active). */
  @Post('routines/:routineId/run')
  @HttpCode(202)
  @Authorize({ callers: ['board', 'agent'] })
  @LogActivity('routine.run_requested', {
    entityType: 'routine',
    entityId: (c) => c.params.routineId,
    details: (c) => ({ runId: c.result.id, status: c.result.status, issueId: c.result.linkedIssueId }),
  })
  run(
    @CurrentActor() actor: Actor,
    @RouteCompany() companyId: string | undefined,
    @Param('routineId') routineId: string,
  ): Promise<RoutineRunResponseDto> {
    return this.routines.runNow(actor, companyId, routineId);
  }

  /** Executions of the routine, newest first. */
  @Get('routines/:routineId/runs')
  @Authorize({ callers: ['board', 'agent'] })
  runs(
    @RouteCompany() companyId: string | undefined,
    @Param('routineId') routineId: string,
    @Query() q: ListRunsQueryDto,
  ): Promise<RoutineRunResponseDto[]> {
    return this.routines.runs(companyId, routineId, q.limit ?? 50);
  }

  /** Adds a trigger: `schedule` (cron + time zone) or `manual`. */
  @Post('routines/:routineId/triggers')
  @HttpCode(201)
  @Authorize({ callers: ['board', 'agent'] })
  @triggerActivity('routine.trigger_created')
  addTrigger(
    @CurrentActor() actor: Actor,
    @RouteCompany() companyId: string | undefined,
    @Param('routineId') routineId: string,
    @Body() dto: CreateTriggerDto,
  ): Promise<TriggerResponseDto> {
    return this.routines.addTrigger(actor, companyId, routineId, dto);
  }

  /** Changes label, enabled, cron or time zone; the next firing is recomputed from now. */
  @Patch('routine-triggers/:triggerId')
  @Authorize({ callers: ['board', 'agent'] })
  @triggerActivity('routine.trigger_updated')
  updateTrigger(
    @CurrentActor() actor: Actor,
    @RouteCompany() companyId: string | undefined,
    @Param('triggerId') triggerId: string,
    @Body() dto: UpdateTriggerDto,
  ): Promise<TriggerResponseDto> {
    return this.routines.updateTrigger(actor, companyId, triggerId, dto);
  }

  @Delete('routine-triggers/:triggerId')
  @Authorize({ callers: ['board', 'agent'] })
  @triggerActivity('routine.trigger_deleted')
  removeTrigger(
    @CurrentActor() actor: Actor,
    @RouteCompany() companyId: string | undefined,
    @Param('triggerId') triggerId: string,
  ): Promise<TriggerResponseDto> {
    return this.routines.removeTrigger(actor, companyId, triggerId);
  }
}
