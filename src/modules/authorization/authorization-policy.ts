/**
 * The authorization policy block (spec, Permission grant and membership): found under
 * `authorizationPolicy` inside agent `permissions`, project/workspace `executionWorkspacePolicy`
 * or issue `executionPolicy`. Three shapes are recognised; anything else that is not plainly
 * open is unclassifiable and blocks (deny_policy_restricted).
 */
export type PolicyClass = 'none' | 'private' | 'protected' | 'requires_approval' | 'unclassifiable';

const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Modes that restrict nothing. */
const OPEN_MODES = ['public', 'company', 'default', 'open', 'visible', 'unrestricted'];

function classifyVisibility(v: unknown): PolicyClass {
  if (!isPlainObject(v) || Object.keys(v).some((k) => k !== 'mode')) return 'unclassifiable';
  if (v.mode === 'private') return 'private';
  return v.mode === undefined || OPEN_MODES.includes(v.mode as string) ? 'none' : 'unclassifiable';
}

function classifyAssignment(v: unknown): PolicyClass {
  if (!isPlainObject(v) || Object.keys(v).some((k) => !['mode', 'protectedAgentRequiresApproval'].includes(k))) return 'unclassifiable';
  const approval = v.protectedAgentRequiresApproval;
  if (approval !== undefined && typeof approval !== 'boolean') return 'unclassifiable';
  if (approval === true) return 'requires_approval';
  if (v.mode === 'protected') return 'protected';
  return v.mode === undefined || OPEN_MODES.includes(v.mode as string) ? 'none' : 'unclassifiable';
}

function classifyProtectedAgent(v: unknown): PolicyClass {
  if (!isPlainObject(v) || Object.keys(v).some((k) => k !== 'requiresApproval')) return 'unclassifiable';
  if (v.requiresApproval === true) return 'requires_approval';
  return v.requiresApproval === undefined || v.requiresApproval === false ? 'none' : 'unclassifiable';
}

const SEVERITY: PolicyClass[] = ['none', 'private', 'protected', 'requires_approval', 'unclassifiable'];
const worst = (a: PolicyClass, b: PolicyClass): PolicyClass => (SEVERITY.indexOf(a) >= SEVERITY.indexOf(b) ? a : b);

/** Classifies one `authorizationPolicy` value (absent or null: none). */
export function classifyPolicy(policy: unknown): PolicyClass {
  if (policy === undefined || policy === null) return 'none';
  if (!isPlainObject(policy)) return 'unclassifiable';
  let result: PolicyClass = 'none';
  for (const [key, value] of Object.entries(policy)) {
    if (key === 'agentVisibility') result = worst(result, classifyVisibility(value));
    else if (key === 'assignmentPolicy') result = worst(result, classifyAssignment(value));
    else if (key === 'protectedAgent') result = worst(result, classifyProtectedAgent(value));
    else return 'unclassifiable';
  }
  return result;
}

/** The policy class of a container (agent permissions, executionWorkspacePolicy, executionPolicy). */
export function policyOfContainer(container: unknown): PolicyClass {
  if (container === undefined || container === null) return 'none';
  if (!isPlainObject(container)) return 'none';
  return classifyPolicy(container.authorizationPolicy);
}

/** The most restrictive class among several containers. */
export function combinedPolicy(...containers: unknown[]): PolicyClass {
  return containers.map(policyOfContainer).reduce(worst, 'none');
}
