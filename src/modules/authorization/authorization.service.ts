import { Injectable } from '@nestjs/common';
import type { Actor } from '../../common/auth/actor';
import { forbidden } from '../../common/errors/domain-error';
import { isUuid } from '../../common/http/uuid';
import { combinedPolicy, policyOfContainer } from './authorization-policy';
import { AuthzAgentRecord, AuthorizationRepository, AuthzGrantRecord } from './authorization.repository';
import { ACTION_PERMISSION_KEYS, AuthzAction, AuthzDecision, AuthzRequest, DecisionReason } from './authorization.types';
import { constraintCount, isCompanyWide, parseScope, scopeMatches } from './grant-scope';
import { ancestorsOf } from './org-chart';

/** What the decision knows about the company, the actor and the target, loaded once per call. */
interface DecisionContext {
  req: AuthzRequest;
  actor: Actor;
  agents: Map<string, AuthzAgentRecord>;
  reportsTo: Map<string, string | null>;
  actorAgent?: AuthzAgentRecord;
  membershipRole?: string;
  grants: AuthzGrantRecord[];
}

/** Actions only agent principals have a permission mapping for. */
const AGENT_ONLY: AuthzAction[] = ['secrets.read'];
const INACTIVE_AGENT = ['terminated', 'pending_approval'];

const allow = (reason: DecisionReason): AuthzDecision => ({ allowed: true, reason });
const deny = (reason: DecisionReason): AuthzDecision => ({ allowed: false, reason });

/**
 * The one authorization decision (spec, Authentication point 9): every mutation touching an
 * agent or an issue assignment asks here and gets allow/deny with exactly one reason.
 * Order: identity, action mapping, instance-level board, company boundary, membership, then the
 * action's own rules (policy, grants with scope, implicit authority, manager chain, self).
 */
@Injectable()
export class AuthorizationService {
  constructor(private readonly repo: AuthorizationRepository) {}

  async decide(req: AuthzRequest): Promise<AuthzDecision> {
    return this.before(req) ?? this.decideIn(await this.loadContext(req, req.actor!));
  }

  /**
   * Whether the decision allows the action for at least one target the caller could name: is a tool
   * that makes this decision any use to the caller (MCP tools/list)? The same decision, over the
   * targets of the action (issue.assign: each other active agent of the company and, for a person,
   * themself; an action without a target as it is), with the company's context loaded once.
   */
  async allowsSome(req: Omit<AuthzRequest, 'targetAgentId' | 'targetUserId' | 'issue'>): Promise<boolean> {
    const early = this.before(req);
    if (early) return early.allowed;
    const ctx = await this.loadContext(req, req.actor!);
    for (const target of this.targetsOf(ctx)) if ((await this.decideIn({ ...ctx, req: { ...req, ...target } })).allowed) return true;
    return false;
  }

  private targetsOf(ctx: DecisionContext): Array<Pick<AuthzRequest, 'targetAgentId' | 'targetUserId'>> {
    if (ctx.req.action !== 'issue.assign') return [{}];
    const self = ctx.actor.kind === 'agent' ? ctx.actor.agentId : null;
    const agents = [...ctx.agents.values()]
      .filter((a) => a.id !== self && !INACTIVE_AGENT.includes(a.status))
      .map((a) => ({ targetAgentId: a.id }));
    return ctx.actor.kind === 'board' ? [{ targetUserId: ctx.actor.userId }, ...agents] : agents;
  }

  /** What is decided before the company's data is needed: identity, the action, the instance's board, the company boundary. */
  private before(req: AuthzRequest): AuthzDecision | null {
    const actor = req.actor;
    if (!actor || (actor.kind === 'agent' ? !actor.agentId : !actor.userId)) return deny('deny_unauthenticated');
    if (!ACTION_PERMISSION_KEYS[req.action]) return deny('deny_unsupported_action');
    if (actor.kind === 'board' && AGENT_ONLY.includes(req.action)) return deny('deny_unsupported_action');
    if (actor.kind === 'board' && actor.source === 'local_implicit') return allow('allow_local_board');
    if (actor.kind === 'board' && actor.isInstanceAdmin) return allow('allow_instance_admin');
    if (!isUuid(req.companyId)) return deny('deny_company_boundary');
    if (actor.kind === 'agent' && actor.companyId !== req.companyId) return deny('deny_company_boundary');
    return null;
  }

  /** The rest of the decision, on the company's context: membership, the target's boundary, the action's own rules. */
  private async decideIn(ctx: DecisionContext): Promise<AuthzDecision> {
    const { actor, req } = ctx;
    if (actor.kind === 'agent' && (!ctx.actorAgent || INACTIVE_AGENT.includes(ctx.actorAgent.status))) {
      return deny('deny_company_boundary');
    }
    if (actor.kind === 'board' && !ctx.membershipRole) return deny('deny_missing_membership');
    if (actor.kind === 'agent' && ctx.membershipRole === '') return deny('deny_missing_membership');
    const boundary = await this.targetBoundary(ctx);
    if (boundary) return boundary;

    switch (req.action) {
      case 'issue.assign':
        return this.decideAssignment(ctx);
      case 'agent.create':
      case 'agent.config.read':
      case 'agent.config.update':
      case 'agent.lifecycle':
      case 'agent.keys.manage':
      case 'agent.permissions.update':
        return this.decideAgentAction(ctx);
      case 'secrets.read':
        // the bindings in an agent's own configuration are its grant to those secrets
        if (this.hasGrant(ctx, ACTION_PERMISSION_KEYS[req.action])) return allow('allow_explicit_grant');
        return this.isSelf(ctx) ? allow('allow_self') : deny('deny_missing_grant');
      case 'users.invite':
      case 'users.manage_permissions':
      case 'joins.approve':
        // an active owner holds every member-administration key through its role, so a company
        // can never lock itself out of its own administration
        if (ctx.membershipRole === 'owner') return allow('allow_explicit_grant');
        if (this.hasGrant(ctx, ACTION_PERMISSION_KEYS[req.action])) return allow('allow_explicit_grant');
        // agents hold these keys only by explicit grant; there is no implicit mapping for them
        return deny(ctx.actor.kind === 'agent' ? 'deny_unsupported_action' : 'deny_missing_grant');
      default:
        return this.hasGrant(ctx, ACTION_PERMISSION_KEYS[req.action]) ? allow('allow_explicit_grant') : deny('deny_missing_grant');
    }
  }

  /** decide(), throwing 403 `{ error, code: "forbidden", reason }` on deny. */
  async assert(req: AuthzRequest): Promise<AuthzDecision> {
    const d = await this.decide(req);
    if (!d.allowed) throw forbidden(`Not allowed: ${req.action} (${d.reason})`, { reason: d.reason });
    return d;
  }

  private async loadContext(req: AuthzRequest, actor: Actor): Promise<DecisionContext> {
    const agents = await this.repo.agentsOfCompany(req.companyId);
    const byId = new Map(agents.map((a) => [a.id, a]));
    const [principalType, principalId] = actor.kind === 'agent' ? ['agent', actor.agentId] : ['user', actor.userId];
    const membership = await this.repo.membership(req.companyId, principalType, principalId);
    const grants = await this.repo.grants(req.companyId, principalType, principalId, ACTION_PERMISSION_KEYS[req.action]);
    return {
      req,
      actor,
      agents: byId,
      reportsTo: new Map(agents.map((a) => [a.id, a.reportsTo])),
      actorAgent: actor.kind === 'agent' ? byId.get(actor.agentId) : undefined,
      // '' marks an existing but inactive membership; undefined: no row
      membershipRole: membership ? (membership.status === 'active' ? membership.membershipRole : '') : undefined,
      grants,
    };
  }

  /** The target must live in the company; an assignee must also be active there. */
  private async targetBoundary(ctx: DecisionContext): Promise<AuthzDecision | null> {
    const { req } = ctx;
    const assigning = req.action === 'issue.assign';
    if (req.targetAgentId) {
      const target = ctx.agents.get(req.targetAgentId);
      if (!target) return deny('deny_company_boundary');
      if (assigning && INACTIVE_AGENT.includes(target.status)) return deny('deny_company_boundary');
    }
    if (assigning && req.targetUserId) {
      if (!(await this.repo.isActiveUserMember(req.companyId, req.targetUserId))) return deny('deny_company_boundary');
    }
    return null;
  }

  private target(ctx: DecisionContext): AuthzAgentRecord | undefined {
    return ctx.req.targetAgentId ? ctx.agents.get(ctx.req.targetAgentId) : undefined;
  }

  private isSelf(ctx: DecisionContext): boolean {
    return ctx.actor.kind === 'agent' && !!ctx.req.targetAgentId && ctx.req.targetAgentId === ctx.actor.agentId;
  }

  /** The legacy creator flag (the CEO role gets it by default on create). */
  private isLegacyCreator(ctx: DecisionContext): boolean {
    return ctx.actorAgent?.permissions?.canCreateAgents === true;
  }

  private isCeo(ctx: DecisionContext): boolean {
    return ctx.actorAgent?.role === 'ceo';
  }

  /** The target reports (directly or up the chain) to the acting agent. */
  private isManagerOfTarget(ctx: DecisionContext): boolean {
    if (ctx.actor.kind !== 'agent' || !ctx.req.targetAgentId) return false;
    return ancestorsOf(ctx.req.targetAgentId, ctx.reportsTo).includes(ctx.actor.agentId);
  }

  /**
   * Grant evaluation: `explicit` when a company-wide grant or a matching scoped grant exists;
   * `scopeMiss` when scoped grants exist and none covers the target. A scoped grant needs at
   * least one constraint; `tasks:assign_scope` without one grants nothing.
   */
  private evaluateGrants(ctx: DecisionContext, keys: string[], projectId: string | null): { explicit: boolean; scopeMiss: boolean } {
    const grants = ctx.grants.filter((g) => keys.includes(g.permissionKey));
    const companyWide = grants.some((g) => isCompanyWide(g.scope) && g.permissionKey !== 'tasks:assign_scope');
    if (companyWide) return { explicit: true, scopeMiss: false };
    const scoped = grants.map((g) => parseScope(g.scope)).filter((c) => constraintCount(c) > 0 || c.unknown.length > 0);
    if (!scoped.length) return { explicit: false, scopeMiss: false };
    const targetAgentId = ctx.req.targetAgentId ?? null;
    const target = { projectId, targetAgentId, targetAncestors: targetAgentId ? ancestorsOf(targetAgentId, ctx.reportsTo) : [] };
    const matched = scoped.some((c) => scopeMatches(c, target));
    return { explicit: matched, scopeMiss: !matched };
  }

  private hasGrant(ctx: DecisionContext, keys: string[]): boolean {
    return this.evaluateGrants(ctx, keys, ctx.req.projectId ?? null).explicit;
  }

  private async projectPolicy(companyId: string, projectId: string | null): Promise<unknown> {
    if (!projectId || !isUuid(projectId)) return null;
    return this.repo.projectPolicy(companyId, projectId);
  }

  /** issue.assign: policy of target agent, project and issue first, then grants and implicit authority. */
  private async decideAssignment(ctx: DecisionContext): Promise<AuthzDecision> {
    const { req } = ctx;
    const projectId = req.projectId ?? req.issue?.projectId ?? null;
    const policy = combinedPolicy(
      this.target(ctx)?.permissions,
      await this.projectPolicy(req.companyId, projectId),
      req.issue?.executionPolicy,
    );
    const grants = this.evaluateGrants(ctx, ACTION_PERMISSION_KEYS['issue.assign'], projectId);
    if (policy === 'requires_approval' || policy === 'unclassifiable') return deny('deny_policy_restricted');
    if (policy === 'private' || policy === 'protected') {
      if (grants.explicit) return allow('allow_explicit_grant');
      return deny(grants.scopeMiss ? 'deny_scope' : 'deny_policy_restricted');
    }
    if (grants.explicit) return allow('allow_explicit_grant');
    if (ctx.actor.kind === 'agent') {
      if (this.isSelf(ctx)) return allow('allow_self');
      if (this.isCeo(ctx) || this.isLegacyCreator(ctx)) return allow('allow_legacy_agent_creator');
      if (this.isManagerOfTarget(ctx)) return allow('allow_manager_chain');
      if (!req.targetAgentId && !req.targetUserId) return allow('allow_company_agent');
    } else if (ctx.membershipRole && ctx.membershipRole !== 'viewer') {
      return allow('allow_simple_company_member');
    }
    return deny(grants.scopeMiss ? 'deny_scope' : 'deny_missing_grant');
  }

  /** Agent creation, configuration, lifecycle, keys and permissions. */
  private decideAgentAction(ctx: DecisionContext): AuthzDecision {
    const { req } = ctx;
    const grants = this.evaluateGrants(ctx, ACTION_PERMISSION_KEYS[req.action], null);
    if (ctx.actor.kind === 'board') {
      // human members read configuration on membership alone; everything else needs a grant
      if (req.action === 'agent.config.read') return allow('allow_simple_company_member');
      if (grants.explicit) return allow('allow_explicit_grant');
      return deny(grants.scopeMiss ? 'deny_scope' : 'deny_missing_grant');
    }
    if (req.action === 'agent.permissions.update') {
      // board callers, or the company's CEO agent (its implicit authority)
      return this.isCeo(ctx) ? allow('allow_legacy_agent_creator') : deny('deny_missing_grant');
    }
    const self = this.isSelf(ctx);
    if (self && (req.action === 'agent.config.read' || req.action === 'agent.config.update')) return allow('allow_self');
    const target = this.target(ctx);
    if (target && req.action !== 'agent.config.read' && policyOfContainer(target.permissions) !== 'none') {
      // a protected or private agent is changed by other agents only with an explicit grant
      return grants.explicit ? allow('allow_explicit_grant') : deny('deny_policy_restricted');
    }
    if (grants.explicit) return allow('allow_explicit_grant');
    if (this.isLegacyCreator(ctx)) return allow('allow_legacy_agent_creator');
    if (req.action !== 'agent.create' && req.action !== 'agent.config.read' && this.isManagerOfTarget(ctx)) {
      return allow('allow_manager_chain');
    }
    return deny(grants.scopeMiss ? 'deny_scope' : 'deny_missing_grant');
  }
}
