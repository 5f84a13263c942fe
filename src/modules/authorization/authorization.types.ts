import type { Actor } from '../../common/auth/actor';

/** What an actor wants to do; each maps to permission keys and scope rules in the decision. */
export type AuthzAction =
  | 'agent.create' // hire or create agents (agents:create)
  | 'agent.config.read' // read another agent's configuration
  | 'agent.config.update' // mutate or probe configuration (self allowed)
  | 'agent.lifecycle' // pause, resume, terminate, delete, budgets (not self)
  | 'agent.keys.manage' // list, create, revoke API keys (not self)
  | 'agent.permissions.update' // PATCH permissions: board, or the company's CEO agent
  | 'issue.assign' // set assigneeAgentId / assigneeUserId (tasks:assign, tasks:assign_scope)
  | 'issue.checkout.manage' // force-release another agent's checkout (tasks:manage_active_checkouts)
  | 'environments.manage'
  | 'users.invite'
  | 'users.manage_permissions'
  | 'joins.approve'
  | 'secrets.read'
  | 'agent.suggest_changes' // propose an agent configuration change for board review
  | 'skill.suggest_changes' // propose a skill change for board review
  | 'tasks.assign.grant'; // board operators holding tasks:assign (built-in agent routines)

export const DECISION_REASONS = [
  'allow_local_board',
  'allow_instance_admin',
  'allow_explicit_grant',
  'allow_legacy_agent_creator',
  'allow_self',
  'allow_company_agent',
  'allow_simple_company_member',
  'allow_manager_chain',
  'deny_unauthenticated',
  'deny_company_boundary',
  'deny_missing_membership',
  'deny_missing_grant',
  'deny_policy_restricted',
  'deny_scope',
  'deny_unsupported_action',
] as const;

export type DecisionReason = (typeof DECISION_REASONS)[number];

/**
 * Issue assignment (issues routes): call `assert({ actor, action: 'issue.assign', companyId,
 * targetAgentId | targetUserId (the new assignee; both absent when unassigning), projectId (the
 * issue's project after the change), issue: { id, assigneeAgentId (current), projectId,
 * executionPolicy } })`. The decision reads the target agent's and the project's policy blocks
 * itself; the issue's `executionPolicy` comes from the request (it may not be stored yet).
 */
export interface AuthzRequest {
  actor: Actor | undefined;
  action: AuthzAction;
  companyId: string;
  /** the agent acted on, or the agent an issue is being assigned to */
  targetAgentId?: string | null;
  /** the user an issue is being assigned to */
  targetUserId?: string | null;
  projectId?: string | null;
  /** the issue whose assignment changes (its policy and current assignee matter) */
  issue?: { id?: string; assigneeAgentId: string | null; projectId?: string | null; executionPolicy?: unknown } | null;
}

/** The grant keys an action is satisfied by (besides the implicit rules of the decision). */
export const ACTION_PERMISSION_KEYS: Record<AuthzAction, string[]> = {
  'agent.create': ['agents:create'],
  'agent.config.read': ['agents:create', 'agents:configure'],
  'agent.config.update': ['agents:create', 'agents:configure'],
  'agent.lifecycle': ['agents:create', 'agents:configure'],
  'agent.keys.manage': ['agents:create', 'agents:configure'],
  'agent.permissions.update': ['users:manage_permissions'],
  'issue.assign': ['tasks:assign', 'tasks:assign_scope'],
  'issue.checkout.manage': ['tasks:manage_active_checkouts'],
  'environments.manage': ['environments:manage'],
  'users.invite': ['users:invite'],
  'users.manage_permissions': ['users:manage_permissions'],
  'joins.approve': ['joins:approve'],
  'secrets.read': ['secrets:read'],
  // whoever may apply a change directly may also propose one
  'agent.suggest_changes': ['agents:suggest-changes', 'agents:configure', 'agents:create'],
  'skill.suggest_changes': ['skills:suggest-changes', 'skills:create', 'agents:create'],
  'tasks.assign.grant': ['tasks:assign'],
};

export interface AuthzDecision {
  allowed: boolean;
  reason: DecisionReason;
}
