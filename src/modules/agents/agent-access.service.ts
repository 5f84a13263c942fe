import { Injectable } from '@nestjs/common';
import type { Actor } from '../../common/auth/actor';
import { classifyPolicy } from '../authorization/authorization-policy';
import { AuthorizationService } from '../authorization/authorization.service';
import { isCompanyWide } from '../authorization/grant-scope';
import { invalidField } from './agent-fields';
import { AgentLookup } from './agent-lookup.service';
import { AgentEntity } from './agent.entity';
import { AgentMemberships } from './agent-memberships.port';
import { AgentsRepository } from './agents.repository';
import { AgentAccessDto, AgentResponseDto, GrantDto, MembershipDto, UpdateAgentPermissionsDto } from './dto/agent.dto';

const ASSIGN_KEYS = ['tasks:assign', 'tasks:assign_scope'];

/** The `access` block of an agent and the canAssignTasks switch (membership + tasks:assign grant). */
@Injectable()
export class AgentAccessService {
  constructor(
    private readonly agents: AgentsRepository,
    private readonly memberships: AgentMemberships,
    private readonly lookup: AgentLookup,
    private readonly authz: AuthorizationService,
  ) {}

  /**
   * PATCH permissions (board, or the company's CEO agent): canCreateAgents is stored on the agent,
   * canAssignTasks becomes membership + grant, authorizationPolicy is the agent's policy block.
   */
  async updatePermissions(
    actor: Actor,
    routeCompanyId: string | undefined,
    agentId: string,
    dto: UpdateAgentPermissionsDto,
  ): Promise<AgentResponseDto> {
    const agent = await this.lookup.byId(routeCompanyId, agentId, true);
    await this.authz.assert({ actor, action: 'agent.permissions.update', companyId: agent.companyId, targetAgentId: agent.id });
    const permissions: Record<string, unknown> = { ...agent.permissions };
    if (dto.canCreateAgents !== undefined) permissions.canCreateAgents = dto.canCreateAgents;
    if (dto.authorizationPolicy !== undefined) {
      if (dto.authorizationPolicy === null) delete permissions.authorizationPolicy;
      else if (classifyPolicy(dto.authorizationPolicy) === 'unclassifiable') {
        throw invalidField('authorizationPolicy', 'authorizationPolicy has no recognised shape', 'invalid_authorization_policy');
      } else permissions.authorizationPolicy = dto.authorizationPolicy;
    }
    await this.agents.updatePermissions(agent.companyId, agent.id, permissions);
    if (dto.canAssignTasks !== undefined) {
      await this.setCanAssignTasks(agent, dto.canAssignTasks, actor.kind === 'agent' ? `agent:${actor.agentId}` : `user:${actor.userId}`);
    }
    return this.lookup.view(actor, agent);
  }

  async describe(agent: AgentEntity): Promise<AgentAccessDto> {
    const membership = await this.memberships.findMembership(agent.companyId, agent.id);
    const grants = await this.memberships.listGrants(agent.companyId, agent.id);
    const source = this.assignSource(agent, membership, grants);
    return {
      canAssignTasks: source !== 'none',
      taskAssignSource: source,
      membership,
      grants,
    };
  }

  /** Current assignment authority: the CEO role, an explicit grant, the legacy creator flag, or none. */
  private assignSource(agent: AgentEntity, m: MembershipDto | null, grants: GrantDto[]): string {
    if (['terminated', 'pending_approval'].includes(agent.status) || (m && m.status !== 'active')) return 'none';
    if (agent.role === 'ceo') return 'ceo_role';
    const explicit = grants.some(
      (g) => ASSIGN_KEYS.includes(g.permissionKey) && (g.permissionKey === 'tasks:assign' || !isCompanyWide(g.scope)),
    );
    if (explicit) return 'explicit_grant';
    if (agent.permissions?.canCreateAgents === true) return 'agent_creator';
    return 'none';
  }

  /**
   * An active company membership of the agent (role `member`, no grants), created with the agent
   * (spec, Permission grant and membership): its grants are then managed through the members
   * routes like a human's. An inactive one is reactivated.
   */
  async ensureMembership(companyId: string, agentId: string): Promise<void> {
    await this.memberships.ensureMembership(companyId, agentId);
  }

  /** true: active membership plus one company-wide tasks:assign grant; false: the grant is cleared. */
  async setCanAssignTasks(agent: AgentEntity, enabled: boolean, grantedBy: string): Promise<void> {
    await this.memberships.deleteTaskAssignGrant(agent.companyId, agent.id);
    if (!enabled) return;
    await this.ensureMembership(agent.companyId, agent.id);
    await this.memberships.insertTaskAssignGrant(agent.companyId, agent.id, grantedBy);
  }
}
