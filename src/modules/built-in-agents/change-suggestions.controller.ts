import { ApiDomainErrors } from '../../common/errors/api-domain-errors.decorator';
import { BUILT_IN_AGENT_ERRORS } from './built-in-agents.errors';
import { Body, Controller, HttpCode, Param, Post } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { LogActivity } from '../../common/activity/log-activity.decorator';
import type { Actor } from '../../common/auth/actor';
import { Authorize } from '../../common/auth/authorize.decorator';
import { CurrentActor } from '../../common/auth/current-actor.decorator';
import { RouteCompany } from '../../common/auth/route-company.decorator';
import type { ApprovalResponseDto } from '../approvals/dto/approval.dto';
import { ChangeSuggestionsService } from './change-suggestions.service';
import { AgentConfigSuggestionDto, SkillSuggestionDto } from './dto/built-in-agents.dto';

@ApiTags('approvals')
@ApiDomainErrors(BUILT_IN_AGENT_ERRORS)
@Controller()
export class ChangeSuggestionsController {
  constructor(private readonly suggestions: ChangeSuggestionsService) {}

  /**
   * Proposes a configuration change of an agent (needs `agents:suggest-changes`, or a direct
   * counterpart). Returns the pending approval (`agent_config_change`); a board user approving it
   * applies the change, rejecting it discards it.
   */
  @Post('agents/:agentId/config-suggestions')
  @HttpCode(201)
  @Authorize({ callers: ['board', 'agent'] })
  @LogActivity('agent.change_suggested', {
    entityType: 'agent',
    entityId: (c) => c.params.agentId,
    details: (c) => ({ approvalId: c.result.id, fields: Object.keys((c.body.changes as object) ?? {}) }),
  })
  suggestAgentChange(
    @CurrentActor() actor: Actor,
    @RouteCompany() routeCompanyId: string | undefined,
    @Param('agentId') agentId: string,
    @Body() dto: AgentConfigSuggestionDto,
  ): Promise<ApprovalResponseDto> {
    return this.suggestions.suggestAgentChange(actor, routeCompanyId, agentId, dto);
  }

  /** Proposes new content for files of a company skill (needs `skills:suggest-changes`); a pending `skill_change` approval. */
  @Post('companies/:companyId/skill-suggestions')
  @HttpCode(201)
  @Authorize({ callers: ['board', 'agent'] })
  @LogActivity('skill.change_suggested', {
    entityType: 'skill',
    entityId: (c) => (c.result.payload as { skillId?: string } | undefined)?.skillId ?? null,
    details: (c) => ({ approvalId: c.result.id, paths: ((c.body.files as Array<{ path: string }>) ?? []).map((f) => f.path) }),
  })
  suggestSkillChange(
    @CurrentActor() actor: Actor,
    @Param('companyId') companyId: string,
    @Body() dto: SkillSuggestionDto,
  ): Promise<ApprovalResponseDto> {
    return this.suggestions.suggestSkillChange(actor, companyId, dto);
  }
}
