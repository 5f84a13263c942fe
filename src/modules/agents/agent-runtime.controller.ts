import { Controller, Get, Param, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import type { Actor } from '../../common/auth/actor';
import { Authorize } from '../../common/auth/authorize.decorator';
import { CurrentActor } from '../../common/auth/current-actor.decorator';
import { RouteCompany } from '../../common/auth/route-company.decorator';
import { ApiDomainErrors } from '../../common/errors/api-domain-errors.decorator';
import { notFound } from '../../common/errors/domain-error';
import { AgentRuntimeStateDto, RuntimeStateQueryDto } from '../heartbeat/dto/run-views.dto';
import { RunViewsService } from '../heartbeat/run-views.service';
import { AgentLookup } from './agent-lookup.service';
import { AGENT_ERRORS } from './agents.errors';

@ApiTags('agents')
@ApiDomainErrors(AGENT_ERRORS)
@Controller()
export class AgentRuntimeController {
  constructor(
    private readonly lookup: AgentLookup,
    private readonly views: RunViewsService,
  ) {}

  /**
   * The agent's runtime: the session its next run may resume, its last run (status, error) and
   * the tokens and cost its runs reported so far, with its spend this month. By UUID or shortname
   * (`?companyId=`).
   */
  @Get('agents/:agentId/runtime-state')
  @Authorize({ callers: ['board', 'agent'] })
  async runtimeState(
    @CurrentActor() actor: Actor,
    @RouteCompany() routeCompanyId: string | undefined,
    @Param('agentId') agentId: string,
    @Query() q: RuntimeStateQueryDto,
  ): Promise<AgentRuntimeStateDto> {
    const agent = await this.lookup.byIdOrShortname(actor, routeCompanyId, agentId, q.companyId);
    // a UUID with a ?companyId= of another company does not name this agent
    if (q.companyId !== undefined && agent.companyId !== q.companyId) throw notFound('Agent');
    return this.views.runtimeState(agent);
  }
}
