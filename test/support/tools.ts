import type { TestApp } from './test-app';

/** A remote connection through the board API whose secret goes in `Authorization: Bearer …`; its catalog read. */
export async function remoteConnection(t: TestApp, companyId: string, url: string, secretId: string, extra: Record<string, unknown> = {}) {
  const res = await t.http.post(`/api/companies/${companyId}/tools/connections`).send({
    name: 'Fake remote',
    transport: 'mcp_remote',
    authKind: 'api_key',
    transportConfig: { url },
    credentialRefs: [{ name: 'key', secretId, placement: 'header', key: 'Authorization', prefix: 'Bearer ' }],
    ...extra,
  });
  if (res.status !== 201) throw new Error(`remoteConnection: ${res.status} ${JSON.stringify(res.body)}`);
  const refreshed = await t.http.post(`/api/tool-connections/${res.body.id}/catalog/refresh`).send({});
  if (refreshed.status !== 200 || refreshed.body.status !== 'ok')
    throw new Error(`refresh: ${refreshed.status} ${JSON.stringify(refreshed.body)}`);
  return refreshed.body.connection as { id: string; toolPrefix: string; companyId: string; applicationId: string };
}

/** A profile with these entries, bound to the agent. */
export async function profileFor(
  t: TestApp,
  companyId: string,
  agentId: string,
  entries: Array<Record<string, unknown>>,
  extra: Record<string, unknown> = {},
) {
  const res = await t.http
    .post(`/api/companies/${companyId}/tools/profiles`)
    .send({ name: `p-${Math.random().toString(36).slice(2, 8)}`, entries, ...extra });
  if (res.status !== 201) throw new Error(`profileFor: ${res.status} ${JSON.stringify(res.body)}`);
  await t.http
    .post(`/api/companies/${companyId}/tools/profiles/${res.body.id}/bind`)
    .send({ targetType: 'agent', targetId: agentId })
    .expect(200);
  return res.body as { id: string };
}
