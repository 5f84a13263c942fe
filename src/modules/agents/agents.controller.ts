import { ApiDomainErrors } from '../../common/errors/api-domain-errors.decorator';
import { AGENT_ERRORS } from './agents.errors';
import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { ActivityContext, LogActivity, NoActivity } from '../../common/activity/log-activity.decorator';
import type { Actor } from '../../common/auth/actor';
import { Authorize } from '../../common/auth/authorize.decorator';
import { CurrentActor } from '../../common/auth/current-actor.decorator';
import { RouteCompany } from '../../common/auth/route-company.decorator';
import { AgentAccessService } from './agent-access.service';
import { AgentEnvironmentService } from './agent-environment.service';
import { AgentKeysService } from './agent-keys.service';
import { AgentLifecycleService } from './agent-lifecycle.service';
import { AgentsService, HireResult } from './agents.service';
import {
  AgentDetailResponseDto,
  AgentEnvironmentReportDto,
  AgentKeyResponseDto,
  AgentResponseDto,
  CreateAgentDto,
  CreateAgentKeyDto,
  CreatedAgentKeyResponseDto,
  GetAgentQueryDto,
  HireAgentDto,
  UpdateAgentBudgetDto,
  UpdateAgentDto,
  UpdateAgentPermissionsDto,
} from './dto/agent.dto';

const noDetails = () => ({});
const keyActivity = {
  entityType: 'agent',
  entityId: (c: ActivityContext) => c.params.agentId,
  details: (c: ActivityContext) => ({ keyId: c.result.id, name: c.result.name }),
};

@ApiTags('agents')
@ApiDomainErrors(AGENT_ERRORS)
@Controller()
export class AgentsController {
  constructor(
    private readonly agents: AgentsService,
    private readonly lifecycle: AgentLifecycleService,
    private readonly keys: AgentKeysService,
    private readonly access: AgentAccessService,
    private readonly environment: AgentEnvironmentService,
  ) {}

  /** Roster without terminated agents; configuration redacted for callers that cannot read it. */
  @Get('companies/:companyId/agents')
  @Authorize({ callers: ['board', 'agent'] })
  list(@CurrentActor() actor: Actor, @Param('companyId') companyId: string): Promise<AgentResponseDto[]> {
    return this.agents.list(actor, companyId);
  }

  /** Direct create (board-only): status idle; budgetMonthlyCents > 0 creates a monthly agent budget policy. */
  @Post('companies/:companyId/agents')
  @HttpCode(201)
  @Authorize({ callers: ['board'] })
  @LogActivity('agent.created', { entityType: 'agent' })
  create(@CurrentActor() actor: Actor, @Param('companyId') companyId: string, @Body() dto: CreateAgentDto): Promise<AgentResponseDto> {
    return this.agents.create(actor, companyId, dto);
  }

  /** Hire: `{ agent, approval }`; pending_approval plus a pending approval when the company requires board approval. */
  @Post('companies/:companyId/agent-hires')
  @HttpCode(201)
  @Authorize({ callers: ['board', 'agent'] })
  @LogActivity((c) => (c.result.approval ? 'agent.hire_requested' : 'agent.hired'), {
    entityType: 'agent',
    entityId: (c) => (c.result.agent as { id: string }).id,
    details: (c) => ({ ...c.body, approvalId: (c.result.approval as { id?: string } | null)?.id ?? null }),
  })
  hire(@CurrentActor() actor: Actor, @Param('companyId') companyId: string, @Body() dto: HireAgentDto): Promise<HireResult> {
    return this.agents.hire(actor, companyId, dto);
  }

  /** The calling agent with chainOfCommand and access (agent-only). */
  @Get('agents/me')
  @Authorize({ callers: ['agent'] })
  me(@CurrentActor() actor: Actor): Promise<AgentDetailResponseDto> {
    return this.agents.me(actor);
  }

  /** By UUID or shortname (`?companyId=` or agent auth); adds chainOfCommand and access. */
  @Get('agents/:agentId')
  @Authorize({ callers: ['board', 'agent'] })
  get(
    @CurrentActor() actor: Actor,
    @RouteCompany() routeCompanyId: string | undefined,
    @Param('agentId') agentId: string,
    @Query() q: GetAgentQueryDto,
  ): Promise<AgentDetailResponseDto> {
    return this.agents.get(actor, routeCompanyId, agentId, q.companyId);
  }

  /** Partial update; `permissions` refused; adapterConfig merged unless replaceAdapterConfig; rename collision 409. */
  @Patch('agents/:agentId')
  @Authorize({ callers: ['board', 'agent'] })
  @LogActivity('agent.updated', { entityType: 'agent' })
  update(
    @CurrentActor() actor: Actor,
    @RouteCompany() routeCompanyId: string | undefined,
    @Param('agentId') agentId: string,
    @Body() dto: UpdateAgentDto,
  ): Promise<AgentResponseDto> {
    return this.agents.update(actor, routeCompanyId, agentId, dto);
  }

  /** Board or the company's CEO agent; canAssignTasks writes or clears the tasks:assign grant. */
  @Patch('agents/:agentId/permissions')
  @Authorize({ callers: ['board', 'agent'] })
  @LogActivity('agent.permissions_updated', { entityType: 'agent' })
  permissions(
    @CurrentActor() actor: Actor,
    @RouteCompany() routeCompanyId: string | undefined,
    @Param('agentId') agentId: string,
    @Body() dto: UpdateAgentPermissionsDto,
  ): Promise<AgentResponseDto> {
    return this.access.updatePermissions(actor, routeCompanyId, agentId, dto);
  }

  /** Any state but terminated -> paused; queued and running work is cancelled. */
  @Post('agents/:agentId/pause')
  @HttpCode(200)
  @Authorize({ callers: ['board', 'agent'] })
  @LogActivity('agent.paused', { entityType: 'agent', details: noDetails })
  pause(
    @CurrentActor() actor: Actor,
    @RouteCompany() routeCompanyId: string | undefined,
    @Param('agentId') agentId: string,
  ): Promise<AgentResponseDto> {
    return this.lifecycle.pause(actor, routeCompanyId, agentId);
  }

  /** Back to idle; fails (409) for terminated and pending_approval agents. */
  @Post('agents/:agentId/resume')
  @HttpCode(200)
  @Authorize({ callers: ['board', 'agent'] })
  @LogActivity('agent.resumed', { entityType: 'agent', details: noDetails })
  resume(
    @CurrentActor() actor: Actor,
    @RouteCompany() routeCompanyId: string | undefined,
    @Param('agentId') agentId: string,
  ): Promise<AgentResponseDto> {
    return this.lifecycle.resume(actor, routeCompanyId, agentId);
  }

  /** Terminated for good; every API key revoked, work cancelled. */
  @Post('agents/:agentId/terminate')
  @HttpCode(200)
  @Authorize({ callers: ['board', 'agent'] })
  @LogActivity('agent.terminated', { entityType: 'agent', details: noDetails })
  terminate(
    @CurrentActor() actor: Actor,
    @RouteCompany() routeCompanyId: string | undefined,
    @Param('agentId') agentId: string,
  ): Promise<AgentResponseDto> {
    return this.lifecycle.terminate(actor, routeCompanyId, agentId);
  }

  /** Hard delete with runs, wakeups and keys; returns the deleted record. */
  @Delete('agents/:agentId')
  @Authorize({ callers: ['board', 'agent'] })
  @LogActivity('agent.deleted', { entityType: 'agent', details: (c) => ({ name: c.result.name }) })
  remove(
    @CurrentActor() actor: Actor,
    @RouteCompany() routeCompanyId: string | undefined,
    @Param('agentId') agentId: string,
  ): Promise<AgentResponseDto> {
    return this.lifecycle.remove(actor, routeCompanyId, agentId);
  }

  /**
   * Runs the adapter's environment check on the agent's configuration (e.g. `process`: the command
   * is found and executable) and returns the report; nothing is stored. Board, or agents with
   * `agents:create`.
   */
  @Post('agents/:agentId/test-environment')
  @HttpCode(200)
  @NoActivity('a read-only check: nothing changes')
  @Authorize({ callers: ['board', 'agent'] })
  testEnvironment(
    @CurrentActor() actor: Actor,
    @RouteCompany() routeCompanyId: string | undefined,
    @Param('agentId') agentId: string,
  ): Promise<AgentEnvironmentReportDto> {
    return this.environment.test(actor, routeCompanyId, agentId);
  }

  /** Keys of the agent (revoked ones included); never the token. */
  @Get('agents/:agentId/keys')
  @Authorize({ callers: ['board', 'agent'] })
  listKeys(
    @CurrentActor() actor: Actor,
    @RouteCompany() routeCompanyId: string | undefined,
    @Param('agentId') agentId: string,
  ): Promise<AgentKeyResponseDto[]> {
    return this.keys.list(actor, routeCompanyId, agentId);
  }

  /** Returns the token once (field `token`); 409 for pending_approval and terminated agents. */
  @Post('agents/:agentId/keys')
  @HttpCode(201)
  @Authorize({ callers: ['board', 'agent'] })
  @LogActivity('agent.key_created', keyActivity)
  createKey(
    @CurrentActor() actor: Actor,
    @RouteCompany() routeCompanyId: string | undefined,
    @Param('agentId') agentId: string,
    @Body() dto: CreateAgentKeyDto,
  ): Promise<CreatedAgentKeyResponseDto> {
    return this.keys.create(actor, routeCompanyId, agentId, dto.name);
  }

  /** Marks the key revoked; it stops authenticating at once. */
  @Delete('agents/:agentId/keys/:keyId')
  @Authorize({ callers: ['board', 'agent'] })
  @LogActivity('agent.key_revoked', keyActivity)
  revokeKey(
    @CurrentActor() actor: Actor,
    @RouteCompany() routeCompanyId: string | undefined,
    @Param('agentId') agentId: string,
    @Param('keyId') keyId: string,
  ): Promise<AgentKeyResponseDto> {
    return this.keys.revoke(actor, routeCompanyId, agentId, keyId);
  }

  /** Sets budgetMonthlyCents and syncs the agent's monthly budget policy. */
  @Patch('agents/:agentId/budgets')
  @Authorize({ callers: ['board', 'agent'] })
  @LogActivity('agent.budget_updated', { entityType: 'agent' })
  budgets(
    @CurrentActor() actor: Actor,
    @RouteCompany() routeCompanyId: string | undefined,
    @Param('agentId') agentId: string,
    @Body() dto: UpdateAgentBudgetDto,
  ): Promise<AgentResponseDto> {
    return this.lifecycle.updateBudget(actor, routeCompanyId, agentId, dto.budgetMonthlyCents);
  }
}
