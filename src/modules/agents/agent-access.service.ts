import { Injectable } from '@nestjs/common';
import type { Actor } from '../../common/auth/actor';
import { Db } from '../../database/db.service';
import { classifyPolicy } from '../authorization/authorization-policy';
import { AuthorizationService } from '../authorization/authorization.service';
import { isCompanyWide } from '../authorization/grant-scope';
import { invalidField } from './agent-fields';
import { AgentLookup } from './agent-lookup.service';
import { AgentEntity } from './agent.entity';
import { AgentAccessDto, AgentResponseDto, GrantDto, MembershipDto, UpdateAgentPermissionsDto } from './dto/agent.dto';

interface MembershipRow {
  id: string;
  company_id: string;
  principal_type: string;
  principal_id: string;
  membership_role: string;
  status: string;
  created_at: Date;
  updated_at: Date;
}

interface GrantRow {
  id: string;
  permission_key: string;
  scope: unknown;
  granted_by: string | null;
  created_at: Date;
}

const ASSIGN_KEYS = ['tasks:assign', 'tasks:assign_scope'];

/** The `access` block of an agent and the canAssignTasks switch (membership + tasks:assign grant). */
@Injectable()
export class AgentAccessService {
  constructor(
    private readonly db: Db,
    private readonly lookup: AgentLookup,
    private readonly authz: AuthorizationService,
  ) {}

  /**
   * PATCH permissions (board, or the company's CEO agent): canCreateAgents is stored on the agent,
   * canAssignTasks becomes membership + grant, authorizationPolicy is the agent's policy block.
   */
  async updatePermissions(actor: Actor, agentId: string, dto: UpdateAgentPermissionsDto): Promise<AgentResponseDto> {
    const agent = await this.lookup.byId(actor, agentId, true);
    await this.authz.assert({ actor, action: 'agent.permissions.update', companyId: agent.companyId, targetAgentId: agent.id });
    const permissions: Record<string, unknown> = { ...agent.permissions };
    if (dto.canCreateAgents !== undefined) permissions.canCreateAgents = dto.canCreateAgents;
    if (dto.authorizationPolicy !== undefined) {
      if (dto.authorizationPolicy === null) delete permissions.authorizationPolicy;
      else if (classifyPolicy(dto.authorizationPolicy) === 'unclassifiable') {
        throw invalidField('authorizationPolicy', 'authorizationPolicy has no recognised shape', 'invalid_authorization_policy');
      } else permissions.authorizationPolicy = dto.authorizationPolicy;
    }
    await this.db.query(`UPDATE agents SET permissions = $2, updated_at = now() WHERE id = $1`, [agent.id, JSON.stringify(permissions)]);
    if (dto.canAssignTasks !== undefined) {
      await this.setCanAssignTasks(agent, dto.canAssignTasks, actor.kind === 'agent' ? `agent:${actor.agentId}` : `user:${actor.userId}`);
    }
    return this.lookup.view(actor, agent);
  }

  async describe(agent: AgentEntity): Promise<AgentAccessDto> {
    const [m] = await this.db.query<MembershipRow>(
      `SELECT * FROM company_memberships WHERE company_id = $1 AND principal_type = 'agent' AND principal_id = $2`,
      [agent.companyId, agent.id],
    );
    const grants = await this.db.query<GrantRow>(
      `SELECT id, permission_key, scope, granted_by, created_at FROM principal_permission_grants
        WHERE company_id = $1 AND principal_type = 'agent' AND principal_id = $2 ORDER BY created_at, id`,
      [agent.companyId, agent.id],
    );
    const source = this.assignSource(agent, m, grants);
    return {
      canAssignTasks: source !== 'none',
      taskAssignSource: source,
      membership: m ? toMembership(m) : null,
      grants: grants.map(toGrant),
    };
  }

  /** Current assignment authority: the CEO role, an explicit grant, the legacy creator flag, or none. */
  private assignSource(agent: AgentEntity, m: MembershipRow | undefined, grants: GrantRow[]): string {
    if (['terminated', 'pending_approval'].includes(agent.status) || (m && m.status !== 'active')) return 'none';
    if (agent.role === 'ceo') return 'ceo_role';
    const explicit = grants.some(
      (g) => ASSIGN_KEYS.includes(g.permission_key) && (g.permission_key === 'tasks:assign' || !isCompanyWide(g.scope)),
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
    await this.db.query(
      `INSERT INTO company_memberships (company_id, principal_type, principal_id, membership_role, status)
       VALUES ($1, 'agent', $2, 'member', 'active')
       ON CONFLICT (company_id, principal_type, principal_id) DO UPDATE SET status = 'active', updated_at = now()
       WHERE company_memberships.status <> 'active'`,
      [companyId, agentId],
    );
  }

  /** true: active membership plus one company-wide tasks:assign grant; false: the grant is cleared. */
  async setCanAssignTasks(agent: AgentEntity, enabled: boolean, grantedBy: string): Promise<void> {
    await this.db.query(
      `DELETE FROM principal_permission_grants
        WHERE company_id = $1 AND principal_type = 'agent' AND principal_id = $2 AND permission_key = 'tasks:assign'`,
      [agent.companyId, agent.id],
    );
    if (!enabled) return;
    await this.ensureMembership(agent.companyId, agent.id);
    await this.db.query(
      `INSERT INTO principal_permission_grants (company_id, principal_type, principal_id, permission_key, scope, granted_by)
       VALUES ($1, 'agent', $2, 'tasks:assign', NULL, $3)`,
      [agent.companyId, agent.id, grantedBy],
    );
  }
}

const toMembership = (m: MembershipRow): MembershipDto => ({
  id: m.id,
  companyId: m.company_id,
  principalType: m.principal_type,
  principalId: m.principal_id,
  membershipRole: m.membership_role,
  status: m.status,
  createdAt: new Date(m.created_at).toISOString(),
  updatedAt: new Date(m.updated_at).toISOString(),
});

const toGrant = (g: GrantRow): GrantDto => ({
  id: g.id,
  permissionKey: g.permission_key,
  scope: g.scope ?? null,
  grantedBy: g.granted_by,
  createdAt: new Date(g.created_at).toISOString(),
});
