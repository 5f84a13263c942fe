import * as fs from 'node:fs';
import * as path from 'node:path';
import { createAgentWithKey, createRestrictedAgentWithKey } from '../support/agents';
import { bearer, createCompany } from '../support/factories';
import { probeConfig, scratchDir, TERMINAL, waitRun, wakeRun } from '../support/heartbeat';
import { createProject } from '../support/projects';
import { createSecret, secretRef, setAgentEnv } from '../support/secrets';
import { sqlAgent } from '../support/sql';
import { createTestApp, TestApp } from '../support/test-app';

const envOf = async (t: TestApp, agentId: string): Promise<Record<string, unknown>> =>
  (await t.dataSource.query('SELECT adapter_config FROM agents WHERE id = $1', [agentId]))[0].adapter_config.env ?? {};

describe('secret bindings need a grant', () => {
  let t: TestApp;
  let tmp: string;
  beforeAll(async () => {
    t = await createTestApp({ listen: true, env: { SERVICE_HEARTBEAT_KEEPALIVE_MS: '100' } });
    tmp = scratchDir('secret-grant-');
  });
  afterAll(async () => {
    await t.close();
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  describe('PATCH /api/agents/:agentId', () => {
    it('an agent of another company is refused (404, as an unknown agent)', async () => {
      const [a, b] = [await createCompany(t), await createCompany(t)];
      const target = await createAgentWithKey(t, a.id);
      const foreign = await createAgentWithKey(t, b.id);
      await t.http.patch(`/api/agents/${target.agent.id}`).set(bearer(foreign.token)).send({ title: 'x' }).expect(404);
    });

    it('an agent with only its own key cannot add a secret_ref to itself (403), but may change its other fields', async () => {
      const co = await createCompany(t);
      const secret = await createSecret(t, co.id);
      const self = await createRestrictedAgentWithKey(t, co.id);
      const res = await t.http
        .patch(`/api/agents/${self.agent.id}`)
        .set(bearer(self.token))
        .send({ adapterConfig: { env: { STOLEN: secretRef(secret.id) } } })
        .expect(403);
      expect(res.body).toMatchObject({ code: 'secret_binding_not_granted', field: 'adapterConfig.env.STOLEN' });
      expect(await envOf(t, self.agent.id)).toEqual({});
      // other fields, and the adapter config without bindings, still change
      await t.http.patch(`/api/agents/${self.agent.id}`).set(bearer(self.token)).send({ title: 'Self-titled' }).expect(200);
      await t.http
        .patch(`/api/agents/${self.agent.id}`)
        .set(bearer(self.token))
        .send({ adapterConfig: { env: { PLAIN: 'value' } } })
        .expect(200);
      expect(await envOf(t, self.agent.id)).toEqual({ PLAIN: 'value' });
    });

    it('the board binds; the agent keeps the binding through its own edits, cannot repoint it, and may drop it', async () => {
      const co = await createCompany(t);
      const [s1, s2] = [await createSecret(t, co.id), await createSecret(t, co.id)];
      await t.http.post(`/api/secrets/${s1.id}/rotate`).send({ value: 'v2' }).expect(200);
      const self = await createRestrictedAgentWithKey(t, co.id);
      await t.http
        .patch(`/api/agents/${self.agent.id}`)
        .send({ adapterConfig: { env: { TOKEN: secretRef(s1.id) } } })
        .expect(200);
      // an unrelated config change merges with the existing binding: allowed
      await t.http
        .patch(`/api/agents/${self.agent.id}`)
        .set(bearer(self.token))
        .send({ adapterConfig: { command: 'echo' } })
        .expect(200);
      expect((await envOf(t, self.agent.id)).TOKEN).toMatchObject({ secretId: s1.id });
      for (const changed of [secretRef(s2.id), secretRef(s1.id, 1), secretRef(s1.id, 'latest', { delivery: 'env' })]) {
        const res = await t.http
          .patch(`/api/agents/${self.agent.id}`)
          .set(bearer(self.token))
          .send({ adapterConfig: { env: { TOKEN: changed } } })
          .expect(403);
        expect(res.body.code).toBe('secret_binding_not_granted');
      }
      await t.http
        .patch(`/api/agents/${self.agent.id}`)
        .set(bearer(self.token))
        .send({ adapterConfig: { command: 'true', env: {} }, replaceAdapterConfig: true })
        .expect(200);
      expect(await envOf(t, self.agent.id)).toEqual({});
    });

    it('an agent holding agents:create (canCreateAgents) may bind', async () => {
      const co = await createCompany(t);
      const secret = await createSecret(t, co.id);
      const creator = await createAgentWithKey(t, co.id, { role: 'engineer' });
      await t.http.patch(`/api/agents/${creator.agent.id}/permissions`).send({ canCreateAgents: true }).expect(200);
      await t.http
        .patch(`/api/agents/${creator.agent.id}`)
        .set(bearer(creator.token))
        .send({ adapterConfig: { env: { OK: secretRef(secret.id) } } })
        .expect(200);
    });
  });

  describe('project env', () => {
    it('an agent without agents:create cannot add a secret binding to a project env (PATCH or create); the board can', async () => {
      const co = await createCompany(t);
      const secret = await createSecret(t, co.id);
      const agent = await createRestrictedAgentWithKey(t, co.id);
      const p = await createProject(t, co.id);
      const res = await t.http
        .patch(`/api/projects/${p.id}`)
        .set(bearer(agent.token))
        .send({ env: { STOLEN: secretRef(secret.id) } })
        .expect(403);
      expect(res.body).toMatchObject({ code: 'secret_binding_not_granted', field: 'env.STOLEN' });
      await t.http
        .post(`/api/companies/${co.id}/projects`)
        .set(bearer(agent.token))
        .send({ name: 'Sneaky', env: { STOLEN: secretRef(secret.id) } })
        .expect(403);
      await t.http.patch(`/api/projects/${p.id}`).set(bearer(agent.token)).send({ description: 'fine' }).expect(200);
      await t.http
        .patch(`/api/projects/${p.id}`)
        .send({ env: { BOUND: secretRef(secret.id) } })
        .expect(200);
    });
  });

  describe('low-trust review agents', () => {
    it('get no new secret binding, even from the board (422)', async () => {
      const co = await createCompany(t);
      const secret = await createSecret(t, co.id);
      const reviewer = await createAgentWithKey(t, co.id, { role: 'reviewer' });
      const res = await t.http
        .patch(`/api/agents/${reviewer.agent.id}`)
        .send({ adapterConfig: { env: { KEY: secretRef(secret.id) } } })
        .expect(422);
      expect(res.body.code).toBe('low_trust_secret_binding');
      await t.http
        .post(`/api/companies/${co.id}/agents`)
        .send({
          name: 'low',
          role: 'general',
          metadata: { trustLevel: 'low' },
          adapterType: 'process',
          adapterConfig: { command: 'true', env: { KEY: secretRef(secret.id) } },
        })
        .expect(422);
    });

    it('get no secret in their process environment even when a binding is stored', async () => {
      const co = await createCompany(t);
      const secret = await createSecret(t, co.id);
      const run = async (role: string) => {
        const out = path.join(tmp, `${role}.json`);
        const agent = await sqlAgent(t, co.id, { role, adapterConfig: probeConfig(out) });
        await setAgentEnv(t, agent.id, { SECRET_TOKEN: secretRef(secret.id) });
        const row = await waitRun(t, await wakeRun(t, agent.id), TERMINAL);
        expect(row.status).toBe('succeeded');
        return JSON.parse(fs.readFileSync(out, 'utf8')).env as Record<string, string>;
      };
      expect((await run('engineer')).SECRET_TOKEN).toBe(secret.plaintext);
      expect((await run('reviewer')).SECRET_TOKEN).toBeUndefined();
    });
  });
});
