import { Injectable } from '@nestjs/common';
import type { Actor } from '../../common/auth/actor';
import { AgentConfigService } from '../agents/agent-config.service';
import { mergeAdapterConfig, normalizeRuntimeConfig } from '../agents/agent-fields';
import { AgentLookup } from '../agents/agent-lookup.service';
import { AgentsService } from '../agents/agents.service';
import type { UpdateAgentDto } from '../agents/dto/agent.dto';
import type { ApprovalEntity } from '../approvals/approval.entity';
import { ApprovalsService, toApprovalResponse } from '../approvals/approvals.service';
import type { ApprovalResponseDto } from '../approvals/dto/approval.dto';
import { AuthorizationService } from '../authorization/authorization.service';
import { BuiltInAgentsService } from './built-in-agents.service';
import { builtInError } from './built-in-agents.errors';
import { AgentConfigChangesDto, AgentConfigSuggestionDto, SkillSuggestionDto } from './dto/built-in-agents.dto';

/** The agent fields a change may carry, as PATCH /api/agents/{agentId} takes them. */
export function toAgentUpdate(changes: AgentConfigChangesDto): UpdateAgentDto {
  const adapterConfig =
    changes.adapterConfig !== undefined || changes.instructions !== undefined
      ? { ...(changes.adapterConfig ?? {}), ...(changes.instructions !== undefined ? { instructions: changes.instructions } : {}) }
      : undefined;
  const dto: UpdateAgentDto = {};
  if (changes.name !== undefined) dto.name = changes.name;
  if (changes.role !== undefined) dto.role = changes.role;
  if (changes.title !== undefined) dto.title = changes.title;
  if (changes.capabilities !== undefined) dto.capabilities = changes.capabilities;
  if (changes.runtimeConfig !== undefined) dto.runtimeConfig = changes.runtimeConfig;
  if (adapterConfig) dto.adapterConfig = adapterConfig;
  return dto;
}

const SAFE_PATH = /^(?!\/)(?!.*(^|\/)\.\.(\/|$))[A-Za-z0-9._\-/]+$/;

/**
 * Suggested changes: an agent (or board user) holding `agents:suggest-changes` /
 * `skills:suggest-changes` proposes an agent configuration or skill change; it becomes a pending
 * approval. A board user approving it applies the change in the approval's transaction (as that
 * user, through the same rules as a direct change); rejecting it discards it.
 */
@Injectable()
export class ChangeSuggestionsService {
  constructor(
    private readonly approvals: ApprovalsService,
    private readonly agents: AgentsService,
    private readonly lookup: AgentLookup,
    private readonly agentConfig: AgentConfigService,
    private readonly authz: AuthorizationService,
    private readonly builtIns: BuiltInAgentsService,
  ) {}

  async suggestAgentChange(
    actor: Actor,
    routeCompanyId: string | undefined,
    agentId: string,
    dto: AgentConfigSuggestionDto,
  ): Promise<ApprovalResponseDto> {
    const agent = await this.lookup.byId(routeCompanyId, agentId);
    await this.authz.assert({ actor, action: 'agent.suggest_changes', companyId: agent.companyId, targetAgentId: agent.id });
    if (agent.status === 'terminated') throw builtInError('invalid_suggestion', 'A terminated agent cannot be changed');
    const update = toAgentUpdate(dto.changes);
    if (!Object.keys(update).length) throw builtInError('invalid_suggestion', 'changes must name at least one field', { field: 'changes' });
    // a change that could never be applied is refused now, not at approval time
    if (update.runtimeConfig) normalizeRuntimeConfig(update.runtimeConfig, agent.runtimeConfig);
    if (update.adapterConfig) {
      await this.agentConfig.forUpdate(
        agent.companyId,
        agent.adapterType,
        mergeAdapterConfig(agent.adapterConfig, update.adapterConfig, false),
      );
    }
    const approval = await this.approvals.createChangeApproval({
      companyId: agent.companyId,
      type: 'agent_config_change',
      agentId: agent.id,
      payload: { changes: dto.changes, reason: dto.reason },
      requestedBy: actor,
    });
    return toApprovalResponse(approval);
  }

  async suggestSkillChange(actor: Actor, companyId: string, dto: SkillSuggestionDto): Promise<ApprovalResponseDto> {
    await this.authz.assert({ actor, action: 'skill.suggest_changes', companyId });
    const skills = this.builtIns.skills;
    if (!skills) throw builtInError('skills_unavailable', 'Skills are not available on this instance');
    const bad = dto.files.find((f) => !SAFE_PATH.test(f.path));
    if (bad)
      throw builtInError('invalid_suggestion', `files: path "${bad.path}" must be relative and stay inside the skill`, { field: 'files' });
    const skill = await skills.findSkill(companyId, dto.skill);
    if (!skill) throw builtInError('invalid_suggestion', `skill "${dto.skill}" is not a skill of this company`, { field: 'skill' });
    const approval = await this.approvals.createChangeApproval({
      companyId,
      type: 'skill_change',
      agentId: null,
      payload: { skillId: skill.id, skillKey: skill.key, files: dto.files, reason: dto.reason },
      requestedBy: actor,
    });
    return toApprovalResponse(approval);
  }

  /** An approved agent configuration change, applied (the approvals port's `agent_config_change` handler). */
  async applyAgentChange(approval: ApprovalEntity, actor: Actor): Promise<void> {
    const changes = (approval.payload.changes ?? {}) as AgentConfigChangesDto;
    await this.agents.update(actor, approval.companyId, approval.agentId!, toAgentUpdate(changes));
  }

  /** An approved skill change, applied (the approvals port's `skill_change` handler). */
  async applySkillChange(approval: ApprovalEntity, actor: Actor): Promise<void> {
    const skills = this.builtIns.skills;
    if (!skills) throw builtInError('skills_unavailable', 'Skills are not available on this instance');
    const p = approval.payload as { skillId: string; files: Array<{ path: string; content: string }> };
    await skills.applySkillFiles(approval.companyId, p.skillId, p.files, actor);
  }
}
