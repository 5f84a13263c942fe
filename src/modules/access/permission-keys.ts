import { badRequest } from '../../common/errors/domain-error';
import { isUuid } from '../../common/http/uuid';

/** The permission keys of the spec (Authentication, permission keys table). */
export const PERMISSION_KEYS = [
  'agents:create',
  'tasks:assign',
  'tasks:assign_scope',
  'tasks:manage_active_checkouts',
  'environments:manage',
  'users:invite',
  'users:manage_permissions',
  'joins:approve',
  'secrets:read',
  'agents:suggest-changes',
  'skills:suggest-changes',
  'agents:configure',
  'skills:create',
] as const;
export type PermissionKey = (typeof PERMISSION_KEYS)[number];

export const MEMBERSHIP_ROLES = ['owner', 'admin', 'member', 'viewer', 'operator'] as const;
export type MembershipRole = (typeof MEMBERSHIP_ROLES)[number];
export const MEMBERSHIP_STATUSES = ['active', 'inactive'] as const;
export type MembershipStatus = (typeof MEMBERSHIP_STATUSES)[number];

/**
 * "Almost all" keys for owners and admins: everything except the keys that only make sense with
 * a scope (`tasks:assign_scope`), for run-bound agents (`secrets:read`), or for review-only
 * agents (the `*:suggest-changes` counterparts of direct keys they already hold).
 */
const MANAGER_KEYS: PermissionKey[] = [
  'agents:create',
  'tasks:assign',
  'tasks:manage_active_checkouts',
  'environments:manage',
  'users:invite',
  'users:manage_permissions',
  'joins:approve',
  'agents:configure',
  'skills:create',
];

/** Grants a human receives on joining with a role. */
export const ROLE_DEFAULT_GRANTS: Record<MembershipRole, PermissionKey[]> = {
  owner: MANAGER_KEYS,
  admin: MANAGER_KEYS,
  operator: ['tasks:assign'],
  member: [],
  viewer: [],
};

/** Scope keys by shorthand family: `project:<id>`, `agent:<id>`, `subtree:<id>`. */
const SCOPE_KEYS: Record<string, 'single' | 'list'> = {
  projectId: 'single',
  projectIds: 'list',
  agentId: 'single',
  agentIds: 'list',
  assigneeAgentId: 'single',
  assigneeAgentIds: 'list',
  targetAgentId: 'single',
  targetAgentIds: 'list',
  managerAgentId: 'single',
  managerAgentIds: 'list',
  subtreeRootAgentId: 'single',
  subtreeRootAgentIds: 'list',
};
const SHORTHAND: Record<string, string> = { project: 'projectId', agent: 'agentId', subtree: 'subtreeRootAgentId' };

export type GrantScope = Record<string, string | string[]>;

export interface GrantInput {
  permissionKey: string;
  scope?: unknown;
}

export interface NormalizedGrant {
  permissionKey: PermissionKey;
  scope: GrantScope | null;
}

/**
 * A scope as stored: null (company-wide) or an object of recognised keys with uuid values.
 * Shorthands (`project:<id>`, `agent:<id>`, `subtree:<id>`) become their object form.
 */
export function normalizeScope(raw: unknown, at: string): GrantScope | null {
  if (raw === undefined || raw === null) return null;
  if (typeof raw === 'string') {
    const m = /^(project|agent|subtree):(.+)$/.exec(raw);
    if (!m || !isUuid(m[2])) throw badRequest(`${at}: scope shorthand must be project:<id>, agent:<id> or subtree:<id>`);
    return { [SHORTHAND[m[1]]]: m[2].toLowerCase() };
  }
  if (typeof raw !== 'object' || Array.isArray(raw)) throw badRequest(`${at}: scope must be an object or a shorthand string`);
  const out: GrantScope = {};
  for (const [k, v] of Object.entries(raw as Record<string, unknown>)) {
    const kind = SCOPE_KEYS[k];
    if (!kind) throw badRequest(`${at}: unknown scope key ${k}`);
    if (kind === 'single') {
      if (!isUuid(v)) throw badRequest(`${at}: scope.${k} must be a uuid`);
      out[k] = v.toLowerCase();
    } else {
      if (!Array.isArray(v) || !v.every(isUuid)) throw badRequest(`${at}: scope.${k} must be a list of uuids`);
      if (v.length) out[k] = [...new Set(v.map((x) => x.toLowerCase()))];
    }
  }
  return Object.keys(out).length ? out : null;
}

/** Validates a list of grants; `tasks:assign_scope` needs at least one scope constraint. Duplicates fold. */
export function normalizeGrants(raw: unknown): NormalizedGrant[] {
  if (!Array.isArray(raw)) throw badRequest('grants must be a list');
  if (raw.length > 200) throw badRequest('grants: at most 200 entries');
  const seen = new Map<string, NormalizedGrant>();
  raw.forEach((g: unknown, i) => {
    const at = `grants[${i}]`;
    if (!g || typeof g !== 'object' || Array.isArray(g)) throw badRequest(`${at} must be an object`);
    const { permissionKey, scope } = g as GrantInput;
    if (!(PERMISSION_KEYS as readonly string[]).includes(permissionKey)) {
      throw badRequest(`${at}: unknown permissionKey ${String(permissionKey)}`);
    }
    const normalized = normalizeScope(scope, at);
    if (permissionKey === 'tasks:assign_scope' && !normalized) {
      throw badRequest(`${at}: tasks:assign_scope needs at least one scope constraint`);
    }
    const grant = { permissionKey: permissionKey as PermissionKey, scope: normalized };
    seen.set(JSON.stringify(grant), grant);
  });
  return [...seen.values()];
}
