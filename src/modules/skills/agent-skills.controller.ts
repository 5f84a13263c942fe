import { ApiDomainErrors } from '../../common/errors/api-domain-errors.decorator';
import { SKILL_ERRORS } from './skills.errors';
import { Body, Controller, Get, HttpCode, Param, Post } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { LogActivity } from '../../common/activity/log-activity.decorator';
import type { Actor } from '../../common/auth/actor';
import { Authorize } from '../../common/auth/authorize.decorator';
import { CurrentActor } from '../../common/auth/current-actor.decorator';
import { RouteCompany } from '../../common/auth/route-company.decorator';
import { AgentSkillSnapshot, AgentSkillsService } from './agent-skills.service';
import { SyncAgentSkillsDto } from './dto/skill.dto';

@ApiTags('agents')
@ApiDomainErrors(SKILL_ERRORS)
@Controller()
export class AgentSkillsController {
  constructor(private readonly agentSkills: AgentSkillsService) {}

  /**
   * The agent's skill snapshot: `mode` by adapter (`process` ephemeral; local CLI runtimes
   * persistent with a cwd, else ephemeral; remote adapters unsupported), the desired canonical
   * keys, and one entry per delivered, missing or unmanaged skill.
   */
  @Get('agents/:agentId/skills')
  @Authorize({ callers: ['board', 'agent'] })
  snapshot(
    @CurrentActor() actor: Actor,
    @RouteCompany() routeCompanyId: string | undefined,
    @Param('agentId') agentId: string,
  ): Promise<AgentSkillSnapshot> {
    return this.agentSkills.snapshot(actor, routeCompanyId, agentId);
  }

  /**
   * Replaces the desired set with exactly the listed skills (ids, canonical keys, or slugs one
   * skill has); an empty list detaches all. Unknown or ambiguous references: 422
   * `Invalid company skill selection (...)`, nothing changed.
   */
  @Post('agents/:agentId/skills/sync')
  @HttpCode(200)
  @Authorize({ callers: ['board', 'agent'] })
  @LogActivity('agent.skills_synced', {
    entityType: 'agent',
    entityId: (c) => c.params.agentId,
    details: (c) => ({ desiredSkills: c.result.desiredSkills }),
  })
  sync(
    @CurrentActor() actor: Actor,
    @RouteCompany() routeCompanyId: string | undefined,
    @Param('agentId') agentId: string,
    @Body() dto: SyncAgentSkillsDto,
  ): Promise<AgentSkillSnapshot> {
    return this.agentSkills.sync(actor, routeCompanyId, agentId, dto.desiredSkills);
  }
}
