/** Managers of an agent, nearest first, following reportsTo to the root; stops at a cycle. */
export function ancestorsOf(agentId: string, reportsTo: Map<string, string | null>): string[] {
  const chain: string[] = [];
  const seen = new Set<string>([agentId]);
  let next = reportsTo.get(agentId) ?? null;
  while (next && !seen.has(next)) {
    chain.push(next);
    seen.add(next);
    next = reportsTo.get(next) ?? null;
  }
  return chain;
}
