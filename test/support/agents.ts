import type { TestApp } from './test-app';
import { uniq } from './factories';

export interface AgentWithKey {
  agent: { id: string; companyId: string; name: string; [k: string]: unknown };
  token: string;
}

/** An agent through the API plus an API key for it. */
export async function createAgentWithKey(t: TestApp, companyId: string, extra: Record<string, unknown> = {}): Promise<AgentWithKey> {
  const res = await t.http
    .post(`/api/companies/${companyId}/agents`)
    .send({ name: uniq('Agent'), role: 'general', adapterType: 'process', adapterConfig: { command: 'true' }, ...extra });
  if (res.status !== 201) throw new Error(`createAgent: ${res.status} ${JSON.stringify(res.body)}`);
  const key = await t.http.post(`/api/agents/${res.body.id}/keys`).send({ name: 'test' });
  if (key.status !== 201) throw new Error(`createKey: ${key.status} ${JSON.stringify(key.body)}`);
  return { agent: res.body, token: key.body.token };
}
