import type { TestApp } from './test-app';
import { bearer, uniq } from './factories';

export interface AgentRecord {
  id: string;
  companyId: string;
  name: string;
  urlKey: string;
  status: string;
  [k: string]: unknown;
}

export interface AgentWithKey {
  agent: AgentRecord;
  token: string;
}

export const agentBody = (extra: Record<string, unknown> = {}) => ({
  name: uniq('Agent'),
  role: 'general',
  adapterType: 'process',
  adapterConfig: { command: 'true' },
  ...extra,
});

/** An agent through the API (board caller of a local trusted instance). */
export async function createAgent(t: TestApp, companyId: string, extra: Record<string, unknown> = {}): Promise<AgentRecord> {
  const res = await t.http.post(`/api/companies/${companyId}/agents`).send(agentBody(extra));
  if (res.status !== 201) throw new Error(`createAgent: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body as AgentRecord;
}

/** A new API key of the agent; returns the token shown once. */
export async function createAgentKey(t: TestApp, agentId: string, name = 'test'): Promise<{ id: string; token: string }> {
  const key = await t.http.post(`/api/agents/${agentId}/keys`).send({ name });
  if (key.status !== 201) throw new Error(`createKey: ${key.status} ${JSON.stringify(key.body)}`);
  return { id: key.body.id, token: key.body.token };
}

/** An agent through the API plus an API key for it. */
export async function createAgentWithKey(t: TestApp, companyId: string, extra: Record<string, unknown> = {}): Promise<AgentWithKey> {
  const agent = await createAgent(t, companyId, extra);
  const { token } = await createAgentKey(t, agent.id);
  return { agent, token };
}

/** An agent with a key and no assignment or creation authority at all. */
export async function createRestrictedAgentWithKey(
  t: TestApp,
  companyId: string,
  extra: Record<string, unknown> = {},
): Promise<AgentWithKey> {
  const a = await createAgentWithKey(t, companyId, { role: 'engineer', ...extra });
  const res = await t.http.patch(`/api/agents/${a.agent.id}/permissions`).send({ canCreateAgents: false, canAssignTasks: false });
  if (res.status !== 200) throw new Error(`restrict: ${res.status} ${JSON.stringify(res.body)}`);
  return a;
}

/** A hired agent waiting for board approval, with its approval. */
export async function createPendingHire(t: TestApp, companyId: string, extra: Record<string, unknown> = {}) {
  const res = await t.http.post(`/api/companies/${companyId}/agent-hires`).send(agentBody(extra));
  if (res.status !== 201 || !res.body.approval) throw new Error(`hire: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body as { agent: AgentRecord; approval: { id: string; status: string; [k: string]: unknown } };
}

export { bearer };
