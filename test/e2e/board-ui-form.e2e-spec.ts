import * as http from 'node:http';
import { createCompany } from '../support/factories';
import { waitFor } from '../support/heartbeat';
import { claudeBinary, FakeAnthropic, startFakeAnthropic } from '../support/fake-anthropic';
import { listenLoopback } from '../support/loopback';
import { createTestApp, TestApp } from '../support/test-app';

interface AdapterEntry {
  type: string;
  source: string;
  builtIn: boolean;
  disabled: boolean;
  loaded: unknown;
  modelsCount: number;
}

/**
 * What the board UI's new-agent form reads to offer a runtime: found by driving the published UI in
 * headless Chromium against the service (the form lists an adapter only when `loaded` is set and
 * `disabled` is false; the adapters page groups by `source` and shows `modelsCount`).
 */
describe('the board UI’s new-agent form', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => {
    await t.close();
  });

  const entry = async (type: string): Promise<AdapterEntry> => {
    const list = (await t.http.get('/api/adapters').expect(200)).body as AdapterEntry[];
    const e = list.find((a) => a.type === type);
    if (!e) throw new Error(`${type} not listed`);
    return e;
  };

  it('GET /api/adapters marks the built-in runtimes loaded, enabled, built-in, with their model count', async () => {
    for (const type of ['claude_local', 'codex_local', 'gemini_local', 'opencode_local']) {
      const e = await entry(type);
      expect(e).toMatchObject({
        source: 'builtin',
        builtIn: true,
        disabled: false,
        loaded: expect.objectContaining({ version: expect.any(String) }),
      });
      expect(e.modelsCount).toBeGreaterThan(0);
    }
    expect(await entry('process')).toMatchObject({ source: 'builtin', disabled: false, modelsCount: 0, loaded: expect.any(Object) });
  });

  it('a force-disabled type is `disabled` in the list (the form stops offering it)', async () => {
    await t.http.patch('/api/adapters/codex_local/override').send({ disabled: true, reason: 'not here' }).expect(200);
    expect(await entry('codex_local')).toMatchObject({ disabled: true, override: expect.objectContaining({ disabled: true }) });
    await t.http.patch('/api/adapters/codex_local/override').send({ disabled: false }).expect(200);
    expect((await entry('codex_local')).disabled).toBe(false);
  });

  it('a company secret is listed with key, scope and status (the Connect step offers it as a saved API key)', async () => {
    const companyId = (await createCompany(t)).id;
    const created = await t.http
      .post(`/api/companies/${companyId}/secrets`)
      .send({ name: 'ANTHROPIC_API_KEY', value: 'sk-ant-ui-test' })
      .expect(201);
    expect(created.body).toMatchObject({ key: 'ANTHROPIC_API_KEY', scope: 'company', status: 'active' });
    const list = await t.http.get(`/api/companies/${companyId}/secrets`).expect(200);
    expect(list.body).toEqual([
      expect.objectContaining({
        id: created.body.id,
        companyId,
        name: 'ANTHROPIC_API_KEY',
        key: 'ANTHROPIC_API_KEY',
        scope: 'company',
        status: 'active',
      }),
    ]);
    expect(JSON.stringify(list.body)).not.toContain('sk-ant-ui-test');
  });

  it('GET …/environments answers [] and …/environments/capabilities the local driver (the form waits for both before it tests or creates)', async () => {
    const companyId = (await createCompany(t)).id;
    expect((await t.http.get(`/api/companies/${companyId}/environments`).expect(200)).body).toEqual([]);
    expect((await t.http.get(`/api/companies/${companyId}/environments/capabilities`).expect(200)).body).toEqual({
      drivers: ['local'],
      sandboxProviders: {},
    });
    await t.http.get('/api/companies/00000000-0000-4000-8000-000000000000/environments').expect(404);
  });

  describe('the Connect step’s test: Claude Code answers a test prompt (the form goes on only after adapter_hello_probe_passed)', () => {
    let fake: FakeAnthropic;
    let companyId: string;
    beforeAll(async () => {
      fake = await startFakeAnthropic(() => ({ text: 'hello', usage: { input: 3, output: 1 } }));
      companyId = (await createCompany(t)).id;
    });
    afterAll(async () => {
      await fake.close();
    });

    it('passes with the key from a company secret reference (resolved for the probe, never shown)', async () => {
      const secret = await t.http
        .post(`/api/companies/${companyId}/secrets`)
        .send({ name: 'ANTHROPIC_API_KEY', value: 'sk-ant-probe-secret-1' })
        .expect(201);
      const before = fake.requests.length;
      const res = await t.http
        .post(`/api/companies/${companyId}/adapters/claude_local/test-environment`)
        .send({
          adapterConfig: {
            command: claudeBinary(),
            env: { ANTHROPIC_API_KEY: { type: 'secret_ref', secretId: secret.body.id, version: 'latest' }, ANTHROPIC_BASE_URL: fake.url },
          },
          testCredentials: {},
          environmentId: null,
        })
        .expect(200);
      expect(res.body.status).toBe('pass');
      expect(res.body.checks.map((c: { code: string }) => c.code)).toContain('adapter_hello_probe_passed');
      const probes = fake.requests.slice(before);
      expect(probes.length).toBeGreaterThan(0);
      expect(probes.every((r) => r.headers['x-api-key'] === 'sk-ant-probe-secret-1')).toBe(true);
      expect(JSON.stringify(res.body)).not.toContain('sk-ant-probe-secret-1');
    });

    it('fails with adapter_hello_probe_failed when the endpoint refuses the request', async () => {
      const server = http.createServer((_req, res) => {
        res.writeHead(400, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ type: 'error', error: { type: 'invalid_request_error', message: 'model: not available here' } }));
      });
      const { port, close } = await listenLoopback(server);
      try {
        const res = await t.http
          .post(`/api/companies/${companyId}/adapters/claude_local/test-environment`)
          .send({
            adapterConfig: { command: claudeBinary(), env: { ANTHROPIC_BASE_URL: `http://127.0.0.1:${port}` } },
            testCredentials: { ANTHROPIC_API_KEY: 'sk-ant-refused-key-1' },
          })
          .expect(200);
        expect(res.body.status).toBe('fail');
        expect(res.body.checks).toEqual(
          expect.arrayContaining([
            expect.objectContaining({ code: 'adapter_endpoint_reachable' }),
            expect.objectContaining({ code: 'adapter_hello_probe_failed', level: 'error' }),
          ]),
        );
        expect(JSON.stringify(res.body)).not.toContain('sk-ant-refused-key-1');
      } finally {
        await close();
      }
    }, 120_000);
  });

  it('POST /api/agents/:id/heartbeat/invoke ("Run now") wakes the agent on demand and answers the run', async () => {
    const companyId = (await createCompany(t)).id;
    const agent = await t.http
      .post(`/api/companies/${companyId}/agents`)
      .send({ name: 'Runner', adapterType: 'process', adapterConfig: { command: 'node', args: ['-e', 'setTimeout(() => {}, 50)'] } })
      .expect(201);
    const res = await t.http.post(`/api/agents/${agent.body.id}/heartbeat/invoke?companyId=${companyId}`).send({}).expect(202);
    expect(res.body).toMatchObject({
      id: expect.any(String),
      agentId: agent.body.id,
      invocationSource: 'on_demand',
      triggerDetail: 'manual',
    });
    const run = await t.http.get(`/api/heartbeat-runs/${res.body.id}`).expect(200);
    expect(run.body).toMatchObject({ agentId: agent.body.id, invocationSource: 'on_demand' });
    await t.http.post(`/api/agents/${agent.body.id}/heartbeat/invoke?companyId=nope`).send({}).expect(400);
    await t.http.post('/api/agents/00000000-0000-4000-8000-000000000000/heartbeat/invoke').send({}).expect(404);
  });

  it('GET /api/cli-auth/me carries the board access the run page checks (source, isInstanceAdmin, companyIds, memberships)', async () => {
    const res = await t.http.get('/api/cli-auth/me').expect(200);
    expect(res.body).toMatchObject({
      persona: 'board',
      source: 'local_implicit',
      isInstanceAdmin: true,
      userId: expect.any(String),
      companyIds: expect.any(Array),
      memberships: [],
    });
  });

  it('GET /api/adapters/:type/config-schema carries `fields` (the agent configuration page reads it) next to the JSON schema', async () => {
    const res = await t.http.get('/api/adapters/claude_local/config-schema').expect(200);
    expect(res.body).toMatchObject({ type: 'object', properties: expect.objectContaining({ command: expect.any(Object) }), fields: [] });
  });

  it('a run gets the type’s instance-level env (PATCH /api/adapters/:type) under the agent’s own env, secret references included', async () => {
    const companyId = (await createCompany(t)).id;
    const secret = await t.http
      .post(`/api/companies/${companyId}/secrets`)
      .send({ name: 'OWN_KEY', value: 'own-secret-value' })
      .expect(201);
    await t.http
      .patch('/api/adapters/process')
      .send({ config: { env: { FROM_INSTANCE: 'instance-value', SHARED: 'instance' } } })
      .expect(200);
    try {
      const agent = await t.http
        .post(`/api/companies/${companyId}/agents`)
        .send({
          name: 'EnvReader',
          adapterType: 'process',
          adapterConfig: {
            command: 'node',
            args: ['-e', 'console.log(`I=${process.env.FROM_INSTANCE} S=${process.env.SHARED} K=${process.env.OWN_KEY?.length}`)'],
            env: { SHARED: 'agent', OWN_KEY: { type: 'secret_ref', secretId: secret.body.id } },
          },
        })
        .expect(201);
      const run = await t.http.post(`/api/agents/${agent.body.id}/wakeup`).send({}).expect(202);
      const done = await waitFor(
        async () => {
          const r = await t.http.get(`/api/heartbeat-runs/${run.body.id}`).expect(200);
          return ['succeeded', 'failed', 'cancelled', 'timed_out'].includes(r.body.status) ? r.body : null;
        },
        'the run to end',
        30_000,
      );
      expect(done.status).toBe('succeeded');
      const log = await t.http.get(`/api/heartbeat-runs/${run.body.id}/log`).expect(200);
      expect(log.body.content).toContain('I=instance-value S=agent K=16');
    } finally {
      await t.http.patch('/api/adapters/process').send({ config: {} }).expect(200);
    }
  });
});
