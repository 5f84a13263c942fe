import type { ProfileEntry, ToolPolicy, ToolProfile } from './tool.types';

/** One tool of a connection, as policies select it. */
export interface PolicyTarget {
  applicationId: string;
  connectionId: string;
  toolName: string;
  catalogEntryId: string | null;
}

const RESTRICTIVENESS: Record<ToolPolicy, number> = { allow: 0, ask: 1, deny: 2 };

/** How closely an entry names the tool: a tool beats its connection, a connection its application; 0 = not at all. */
function specificity(e: ProfileEntry, t: PolicyTarget): number {
  switch (e.selectorType) {
    case 'catalog_entry':
      return e.catalogEntryId !== null && e.catalogEntryId === t.catalogEntryId ? 4 : 0;
    case 'tool_name':
      if (e.toolName !== t.toolName) return 0;
      if (e.connectionId === null) return 3;
      return e.connectionId === t.connectionId ? 4 : 0;
    case 'connection':
      return e.connectionId === t.connectionId ? 2 : 0;
    case 'application':
      return e.applicationId === t.applicationId ? 1 : 0;
  }
}

/**
 * The policy of a tool for an agent, from the active profiles that apply to it (bound to the agent
 * or to its company): the most specific entries that name the tool decide, and among equally
 * specific ones the most restrictive (deny over ask over allow). A tool no entry names is allowed
 * when one of the profiles allows by default, and denied otherwise; with no profile at all the
 * agent has no company tools (deny by default).
 */
export function policyFor(profiles: ToolProfile[], entries: ProfileEntry[], t: PolicyTarget): ToolPolicy {
  const active = new Set(profiles.map((p) => p.id));
  let best = 0;
  let policy: ToolPolicy | null = null;
  for (const e of entries) {
    if (!active.has(e.profileId)) continue;
    const s = specificity(e, t);
    if (s === 0 || s < best) continue;
    if (s > best || policy === null || RESTRICTIVENESS[e.policy] > RESTRICTIVENESS[policy]) policy = e.policy;
    best = s;
  }
  if (policy) return policy;
  return profiles.some((p) => p.defaultAction === 'allow') ? 'allow' : 'deny';
}

/** The include/exclude view of a policy (the board UI's `effect`). */
export const effectOf = (p: ToolPolicy): 'include' | 'exclude' => (p === 'deny' ? 'exclude' : 'include');
