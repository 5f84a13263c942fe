import { ApiDomainErrors } from '../../common/errors/api-domain-errors.decorator';
import { BUILT_IN_AGENT_ERRORS } from './built-in-agents.errors';
import { Body, Controller, Get, HttpCode, Param, Post, Res } from '@nestjs/common';
import { ApiAcceptedResponse, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { ActivityContext, LogActivity } from '../../common/activity/log-activity.decorator';
import type { Actor } from '../../common/auth/actor';
import { Authorize } from '../../common/auth/authorize.decorator';
import { CurrentActor } from '../../common/auth/current-actor.decorator';
import { BuiltInAgentsService } from './built-in-agents.service';
import {
  BuiltInAgentStatusDto,
  BuiltInRoutineRunDto,
  ProvisionBuiltInAgentDto,
  ProvisionResultDto,
  ResetBuiltInAgentDto,
  ResetResultDto,
} from './dto/built-in-agents.dto';

const agentActivity = (action: string, details?: (c: ActivityContext) => Record<string, unknown>) =>
  LogActivity(action, {
    entityType: 'agent',
    entityId: (c) => (c.result.agentId as string | null) ?? null,
    details: details ?? ((c) => ({ key: c.params.key, state: c.result.state })),
  });

const routineActivity = (action: string) =>
  LogActivity(action, {
    entityType: 'agent',
    entityId: (c) => ((c.result.agentId ?? (c.result.run as { routineId?: string } | undefined)?.routineId) as string | undefined) ?? null,
    details: (c) => ({ key: c.params.key, routineKey: c.params.routineKey, runId: (c.result.run as { id?: string } | undefined)?.id }),
  });

/**
 * Built-in agents (briefs, learning, reflection-coach). Every route answers 404
 * `Built-in agents are not enabled.` while the instance feature flag is off.
 */
@ApiTags('built-in agents')
@ApiDomainErrors(BUILT_IN_AGENT_ERRORS)
@Controller('companies/:companyId/built-in-agents')
export class BuiltInAgentsController {
  constructor(private readonly builtIns: BuiltInAgentsService) {}

  /** All definitions with their lifecycle state in the company; adapter and runtime configuration redacted. */
  @Get()
  @Authorize({ callers: ['board', 'agent'] })
  list(@Param('companyId') companyId: string): Promise<BuiltInAgentStatusDto[]> {
    return this.builtIns.list(companyId);
  }

  /** State of one built-in agent: not_provisioned, pending_approval, needs_setup, ready or paused. */
  @Get(':key/status')
  @Authorize({ callers: ['board', 'agent'] })
  status(@Param('companyId') companyId: string, @Param('key') key: string): Promise<BuiltInAgentStatusDto> {
    return this.builtIns.status(companyId, key);
  }

  /**
   * Provisions the agent (needs `agents:create`; `adapterType` must be allowed for the key):
   * 200 when provisioned, 202 with the pending approval when the company requires board approval.
   * Provisioning an existing one again updates its adapter setup only.
   */
  @Post(':key/provision')
  @Authorize({ callers: ['board', 'agent'] })
  @ApiOkResponse({ type: ProvisionResultDto })
  @ApiAcceptedResponse({ type: ProvisionResultDto, description: 'a pending approval was created' })
  @agentActivity('built_in_agent.provisioned', (c) => ({
    key: c.params.key,
    state: c.result.state,
    adapterType: c.body.adapterType ?? null,
    approvalId: c.result.approvalId,
  }))
  async provision(
    @CurrentActor() actor: Actor,
    @Param('companyId') companyId: string,
    @Param('key') key: string,
    @Body() dto: ProvisionBuiltInAgentDto,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<ProvisionResultDto> {
    const { accepted, body } = await this.builtIns.provision(actor, companyId, key, dto);
    reply.status(accepted ? 202 : 200);
    return body;
  }

  /** Idempotent: restores missing parts of the bundle; keeps adapter setup. Needs `agents:create`. */
  @Post(':key/reconcile')
  @HttpCode(200)
  @Authorize({ callers: ['board', 'agent'] })
  @agentActivity('built_in_agent.reconciled')
  reconcile(@CurrentActor() actor: Actor, @Param('companyId') companyId: string, @Param('key') key: string): Promise<ProvisionResultDto> {
    return this.builtIns.reconcile(actor, companyId, key);
  }

  /** Restores registry defaults of `resources` (agent, instructions, skill, routine; omitted = all); keeps adapter setup. Needs `agents:create`. */
  @Post(':key/reset')
  @HttpCode(200)
  @Authorize({ callers: ['board', 'agent'] })
  @agentActivity('built_in_agent.reset', (c) => ({ key: c.params.key, resources: c.result.reset }))
  reset(
    @CurrentActor() actor: Actor,
    @Param('companyId') companyId: string,
    @Param('key') key: string,
    @Body() dto: ResetBuiltInAgentDto,
  ): Promise<ResetResultDto> {
    return this.builtIns.reset(actor, companyId, key, dto.resources);
  }

  /** Board operator with `tasks:assign`: activates the routine and its schedule, resumes a paused agent. */
  @Post(':key/routines/:routineKey/enable')
  @HttpCode(200)
  @Authorize({ callers: ['board'] })
  @routineActivity('built_in_agent.routine_enabled')
  enable(
    @CurrentActor() actor: Actor,
    @Param('companyId') companyId: string,
    @Param('key') key: string,
    @Param('routineKey') routineKey: string,
  ): Promise<BuiltInAgentStatusDto> {
    return this.builtIns.enableRoutine(actor, companyId, key, routineKey);
  }

  /** Pauses the routine and its schedule. */
  @Post(':key/routines/:routineKey/disable')
  @HttpCode(200)
  @Authorize({ callers: ['board'] })
  @routineActivity('built_in_agent.routine_disabled')
  disable(
    @CurrentActor() actor: Actor,
    @Param('companyId') companyId: string,
    @Param('key') key: string,
    @Param('routineKey') routineKey: string,
  ): Promise<BuiltInAgentStatusDto> {
    return this.builtIns.disableRoutine(actor, companyId, key, routineKey);
  }

  /** One run now (202); a paused agent gets the issue with a `built_in_agent_paused` warning. */
  @Post(':key/routines/:routineKey/run')
  @HttpCode(202)
  @Authorize({ callers: ['board'] })
  @routineActivity('built_in_agent.routine_run_requested')
  run(
    @CurrentActor() actor: Actor,
    @Param('companyId') companyId: string,
    @Param('key') key: string,
    @Param('routineKey') routineKey: string,
  ): Promise<BuiltInRoutineRunDto> {
    return this.builtIns.runRoutine(actor, companyId, key, routineKey);
  }
}
