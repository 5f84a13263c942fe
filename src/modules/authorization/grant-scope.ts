import { isUuid } from '../../common/http/uuid';

/**
 * Grant scopes (spec, Permission grant and membership): absent = company-wide; otherwise
 * constraints on the project, the target agent, or the org-chart subtree of the target.
 * Accepted forms: an object with the spec's keys, a shorthand string (`project:<id>`,
 * `agent:<id>`, `subtree:<id>`) or a list of shorthands (or objects) whose constraints add up.
 */
export interface ScopeConstraints {
  projectIds: string[];
  agentIds: string[];
  subtreeRootIds: string[];
  /** keys or forms the service does not understand (they never match) */
  unknown: string[];
}

const PROJECT_KEYS = ['projectId', 'projectIds'];
const AGENT_KEYS = ['agentId', 'agentIds', 'assigneeAgentId', 'assigneeAgentIds', 'targetAgentId', 'targetAgentIds'];
const SUBTREE_KEYS = [
  'managerAgentId',
  'managerAgentIds',
  'subtreeRootAgentId',
  'subtreeRootAgentIds',
  'subtreeAgentId',
  'subtreeAgentIds',
  'rootAgentId',
  'rootAgentIds',
  'reportsToAgentId',
  'reportsToAgentIds',
];

const asIdList = (v: unknown): string[] | null => {
  const list = Array.isArray(v) ? v : [v];
  return list.every((x) => typeof x === 'string' && x.length > 0) ? (list as string[]) : null;
};

function addShorthand(s: string, out: ScopeConstraints): void {
  const m = /^(project|agent|subtree):(.+)$/.exec(s.trim());
  if (!m) {
    out.unknown.push(s);
    return;
  }
  const bucket = m[1] === 'project' ? out.projectIds : m[1] === 'agent' ? out.agentIds : out.subtreeRootIds;
  bucket.push(m[2]);
}

function addObject(o: Record<string, unknown>, out: ScopeConstraints): void {
  for (const [key, value] of Object.entries(o)) {
    if (value === undefined || value === null) continue;
    const ids = asIdList(value);
    if (PROJECT_KEYS.includes(key) && ids) out.projectIds.push(...ids);
    else if (AGENT_KEYS.includes(key) && ids) out.agentIds.push(...ids);
    else if (SUBTREE_KEYS.includes(key) && ids) out.subtreeRootIds.push(...ids);
    else if (key === 'scopes' || key === 'shorthand') parseInto(value, out);
    else out.unknown.push(key);
  }
}

function parseInto(scope: unknown, out: ScopeConstraints): void {
  if (typeof scope === 'string') addShorthand(scope, out);
  else if (Array.isArray(scope)) scope.forEach((s) => parseInto(s, out));
  else if (scope && typeof scope === 'object') addObject(scope as Record<string, unknown>, out);
  else out.unknown.push(String(scope));
}

export function parseScope(scope: unknown): ScopeConstraints {
  const out: ScopeConstraints = { projectIds: [], agentIds: [], subtreeRootIds: [], unknown: [] };
  if (scope !== undefined && scope !== null) parseInto(scope, out);
  return out;
}

/** No scope at all, or an empty object/list: company-wide. */
export function isCompanyWide(scope: unknown): boolean {
  if (scope === undefined || scope === null) return true;
  if (Array.isArray(scope)) return scope.length === 0;
  return typeof scope === 'object' && Object.keys(scope as object).length === 0;
}

export const constraintCount = (c: ScopeConstraints) => c.projectIds.length + c.agentIds.length + c.subtreeRootIds.length;

export interface ScopeTarget {
  projectId?: string | null;
  targetAgentId?: string | null;
  /** the target agent's managers, nearest first (org chart) */
  targetAncestors?: string[];
}

/**
 * Every kind of constraint present must match (project AND agent AND subtree); within a kind
 * any listed id matches. Unknown keys never match, so a scope the service cannot read denies.
 */
export function scopeMatches(c: ScopeConstraints, t: ScopeTarget): boolean {
  if (c.unknown.length || constraintCount(c) === 0) return false;
  if (c.projectIds.length && !(t.projectId && c.projectIds.includes(t.projectId))) return false;
  if (c.agentIds.length && !(t.targetAgentId && c.agentIds.includes(t.targetAgentId))) return false;
  if (c.subtreeRootIds.length) {
    if (!t.targetAgentId) return false;
    const chain = [t.targetAgentId, ...(t.targetAncestors ?? [])];
    if (!c.subtreeRootIds.some((root) => chain.includes(root))) return false;
  }
  return true;
}

/** Shape check for grants written through the API (ids must be UUIDs). */
export function invalidScopeReason(scope: unknown): string | null {
  if (isCompanyWide(scope)) return null;
  const c = parseScope(scope);
  if (c.unknown.length) return `unknown scope key or form: ${c.unknown[0]}`;
  const bad = [...c.projectIds, ...c.agentIds, ...c.subtreeRootIds].find((id) => !isUuid(id));
  return bad ? `scope id is not a UUID: ${bad}` : null;
}
