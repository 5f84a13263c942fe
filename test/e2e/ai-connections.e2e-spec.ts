import { randomUUID } from 'node:crypto';
import { createAgentWithKey } from '../support/agents';
import { bearer, createCompany } from '../support/factories';
import { claudeBinary, FakeAnthropic, startFakeAnthropic } from '../support/fake-anthropic';
import { FakeGemini, startFakeGemini } from '../support/fake-gemini';
import { REJECTED_KEY } from '../support/fake-model-list';
import { FakeOpenAi, startFakeOpenAi } from '../support/fake-openai';
import { TERMINAL, waitFor, waitRun, wakeRun } from '../support/heartbeat';
import { activityOf, describeWithoutCredentials } from '../support/projects';
import { createTestApp, TestApp } from '../support/test-app';
import { auth, ownedCompany } from '../support/users';

type Rec = Record<string, any>;
const KEY = 'sk-ant-connection-secret-value';

/** AI connections: model-provider accounts a company stores (key as a company secret) and configures agents from. */
describe('AI connections', () => {
  let t: TestApp;
  let anthropic: FakeAnthropic;
  let openai: FakeOpenAi;
  let gemini: FakeGemini;

  beforeAll(async () => {
    t = await createTestApp({ listen: true });
    anthropic = await startFakeAnthropic(() => ({ text: 'hello', usage: { input: 3, output: 1 } }));
    openai = await startFakeOpenAi(() => ({ text: 'hello', usage: { input: 3, output: 1 } }));
    gemini = await startFakeGemini(() => ({ text: 'hello', usage: { prompt: 3, output: 1 } }));
  });
  afterAll(async () => {
    await Promise.all([anthropic.close(), openai.close(), gemini.close()]);
    await t.close();
  });

  const base = (companyId: string) => `/api/companies/${companyId}/ai-connections`;
  const connect = async (companyId: string, body: Rec = {}): Promise<Rec> => {
    const res = await t.http.post(base(companyId)).send({
      provider: 'anthropic',
      method: 'api_key',
      name: 'My Claude API',
      ownership: 'personal',
      apiKey: KEY,
      baseUrl: anthropic.url,
      ...body,
    });
    if (res.status !== 201) throw new Error(`connect: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body;
  };

  describe('POST and GET …/ai-connections', () => {
    it('stores the key as a company secret, answers the connection without it, and lists it with who asks', async () => {
      const co = await createCompany(t);
      const c = await connect(co.id, { defaultModel: 'claude-haiku-4-5', agentIds: [], allAgents: true });
      expect(c).toMatchObject({
        companyId: co.id,
        provider: 'anthropic',
        method: 'api_key',
        name: 'My Claude API',
        ownership: 'personal',
        ownerUserId: 'local-board',
        grantId: c.id,
        isDefault: true,
        status: 'connected',
        keyEnv: 'ANTHROPIC_API_KEY',
        baseUrl: anthropic.url,
        effectiveBaseUrl: anthropic.url,
        baseUrlSource: 'connection',
        defaultModel: 'claude-haiku-4-5',
        lastTest: null,
      });
      const secrets = (await t.http.get(`/api/companies/${co.id}/secrets`).expect(200)).body as Rec[];
      expect(secrets.map((s) => s.id)).toContain(c.secretId);
      const list = (await t.http.get(base(co.id)).expect(200)).body;
      expect(list).toEqual({ currentUserId: 'local-board', connections: [c] });
      expect((await t.http.get(`${base(co.id)}?agentId=${randomUUID()}`).expect(200)).body.connections).toHaveLength(1);
      expect((await t.http.get(`${base(co.id)}/${c.id}`).expect(200)).body).toEqual(c);
      const activity = await activityOf(t, co.id, 'ai_connection.created');
      expect(activity).toHaveLength(1);
      const everything = JSON.stringify([c, list, secrets, await activityOf(t, co.id)]);
      expect(everything).not.toContain(KEY);
    });

    it('a newer personal connection becomes the default; PUT …/default moves it back', async () => {
      const co = await createCompany(t);
      const first = await connect(co.id);
      const second = await connect(co.id, { name: 'Second key' });
      const byId = async () =>
        new Map(((await t.http.get(base(co.id)).expect(200)).body.connections as Rec[]).map((c) => [c.id, c.isDefault]));
      expect(await byId()).toEqual(
        new Map([
          [first.id, false],
          [second.id, true],
        ]),
      );
      const res = await t.http
        .put(`${base(co.id)}/default`)
        .send({ grantId: first.id })
        .expect(200);
      expect(res.body).toMatchObject({ id: first.id, isDefault: true });
      expect(await byId()).toEqual(
        new Map([
          [first.id, true],
          [second.id, false],
        ]),
      );
      // a shared connection becomes the company's default when it has none, and does not touch personal defaults
      const shared = await connect(co.id, { ownership: 'shared', name: 'Team key' });
      expect(shared).toMatchObject({ ownership: 'shared', ownerUserId: null, isDefault: true });
      expect((await byId()).get(first.id)).toBe(true);
    });

    it('refuses bad input with 400 and subscription sign-ins with 422', async () => {
      const co = await createCompany(t);
      const ok = { provider: 'anthropic', method: 'api_key', name: 'k', ownership: 'personal', apiKey: 'sk-x' };
      for (const body of [
        {},
        { ...ok, provider: 'acme' },
        { ...ok, ownership: 'mine' },
        { ...ok, name: '  ' },
        { ...ok, apiKey: undefined },
        { ...ok, apiKey: 42 },
        { ...ok, baseUrl: 'not a url' },
        { ...ok, baseUrl: 'ftp://models.example' },
        { ...ok, defaultModel: 'two words' },
        { ...ok, connectionId: 'nope' },
      ])
        await t.http.post(base(co.id)).send(body).expect(400);
      const sub = await t.http
        .post(base(co.id))
        .send({ ...ok, method: 'subscription', apiKey: undefined })
        .expect(422);
      expect(sub.body).toMatchObject({ code: 'login_method_unsupported' });
      expect(
        (
          await t.http
            .post(`${base(co.id)}/local/attempts`)
            .send({})
            .expect(422)
        ).body.code,
      ).toBe('login_method_unsupported');
      expect((await t.http.get(`${base(co.id)}/login/abc`).expect(404)).body.code).toBe('login_session_not_found');
      // a private address is refused by the destination policy, before anything is stored
      const refused = await t.http
        .post(base(co.id))
        .send({ ...ok, baseUrl: 'http://10.1.2.3:8080' })
        .expect(422);
      expect(refused.body).toMatchObject({ code: 'url_not_allowed', field: 'baseUrl', reason: 'private' });
      expect((await t.http.get(base(co.id)).expect(200)).body.connections).toEqual([]);
      expect((await t.http.get(`/api/companies/${co.id}/secrets`).expect(200)).body).toEqual([]);
    });
  });

  describe('test, PATCH and DELETE', () => {
    it('a test asks the provider for its models at the connection’s base URL: pass, a refused key, an unreachable endpoint', async () => {
      const co = await createCompany(t);
      const c = await connect(co.id);
      const ok = await t.http
        .post(`${base(co.id)}/${c.id}/test`)
        .send({})
        .expect(200);
      expect(ok.body).toMatchObject({ status: 'pass', httpStatus: 200, endpoint: `${anthropic.url}/v1/models` });
      expect(ok.body.models).toEqual(expect.arrayContaining(['claude-sonnet-4-5']));
      expect((await t.http.get(`${base(co.id)}/${c.id}`).expect(200)).body.lastTest).toMatchObject({ status: 'pass' });

      await t.http
        .patch(`${base(co.id)}/${c.id}`)
        .send({ apiKey: REJECTED_KEY })
        .expect(200);
      const bad = await t.http
        .post(`${base(co.id)}/${c.id}/test`)
        .send({})
        .expect(200);
      expect(bad.body).toMatchObject({ status: 'fail', httpStatus: 401, models: [] });
      expect(bad.body.message).toContain('refused the key');

      await t.http
        .patch(`${base(co.id)}/${c.id}`)
        .send({ baseUrl: 'http://127.0.0.1:9' })
        .expect(200);
      const down = await t.http
        .post(`${base(co.id)}/${c.id}/test`)
        .send({})
        .expect(200);
      expect(down.body).toMatchObject({ status: 'fail', httpStatus: null });
      expect(down.body.message).toContain('not reachable');
      expect(JSON.stringify([ok.body, bad.body, down.body])).not.toContain(REJECTED_KEY);
    });

    it('OpenAI and Gemini connections are tested with their own APIs', async () => {
      const co = await createCompany(t);
      const o = await connect(co.id, { provider: 'openai', baseUrl: openai.url, apiKey: 'sk-openai' });
      const g = await connect(co.id, { provider: 'google', baseUrl: gemini.url, apiKey: 'gm-key' });
      expect(g).toMatchObject({ provider: 'gemini', keyEnv: 'GEMINI_API_KEY' });
      expect(
        (
          await t.http
            .post(`${base(co.id)}/${o.id}/test`)
            .send({})
            .expect(200)
        ).body,
      ).toMatchObject({
        status: 'pass',
        models: expect.arrayContaining(['gpt-5-codex']),
      });
      expect(
        (
          await t.http
            .post(`${base(co.id)}/${g.id}/test`)
            .send({})
            .expect(200)
        ).body,
      ).toMatchObject({
        status: 'pass',
        models: expect.arrayContaining(['gemini-2.5-pro']),
      });
    });

    it('PATCH renames, rotates the key (a new secret version), clears the base URL; DELETE removes it and its key', async () => {
      const co = await createCompany(t);
      const c = await connect(co.id);
      const res = await t.http
        .patch(`${base(co.id)}/${c.id}`)
        .send({ name: 'Renamed', apiKey: 'sk-new', baseUrl: null })
        .expect(200);
      expect(res.body).toMatchObject({
        name: 'Renamed',
        baseUrl: null,
        baseUrlSource: 'vendor',
        effectiveBaseUrl: 'https://api.anthropic.com',
      });
      const secret = ((await t.http.get(`/api/companies/${co.id}/secrets`).expect(200)).body as Rec[]).find((s) => s.id === c.secretId);
      expect(secret?.latestVersion).toBe(2);
      await t.http
        .patch(`${base(co.id)}/${c.id}`)
        .send({ name: '' })
        .expect(400);
      await t.http
        .patch(`${base(co.id)}/${c.id}`)
        .send({ baseUrl: 'http://169.254.169.254/' })
        .expect(422);
      await t.http.delete(`${base(co.id)}/${c.id}`).expect(200);
      await t.http.get(`${base(co.id)}/${c.id}`).expect(404);
      expect((await t.http.get(`/api/companies/${co.id}/secrets`).expect(200)).body).toEqual([]);
      expect((await activityOf(t, co.id, 'ai_connection.deleted')).length).toBe(1);
    });

    it('another company’s connection answers 404 on every route; an unknown id too', async () => {
      const a = await createCompany(t);
      const b = await createCompany(t);
      const c = await connect(a.id);
      for (const id of [c.id, randomUUID(), 'not-a-uuid']) {
        await t.http.get(`${base(b.id)}/${id}`).expect(404);
        await t.http
          .patch(`${base(b.id)}/${id}`)
          .send({ name: 'x' })
          .expect(404);
        await t.http
          .post(`${base(b.id)}/${id}/test`)
          .send({})
          .expect(404);
        await t.http.get(`${base(b.id)}/${id}/active-runs`).expect(404);
        await t.http.delete(`${base(b.id)}/${id}`).expect(404);
      }
      await t.http
        .put(`${base(b.id)}/default`)
        .send({ grantId: c.id })
        .expect(404);
      expect((await t.http.get(`${base(a.id)}/${c.id}`).expect(200)).body.id).toBe(c.id);
    });

    it('agents may not call the routes (403)', async () => {
      const co = await createCompany(t);
      const { token } = await createAgentWithKey(t, co.id);
      await t.http.get(base(co.id)).set(bearer(token)).expect(403);
      await t.http
        .post(base(co.id))
        .set(bearer(token))
        .send({ provider: 'anthropic', method: 'api_key', name: 'x', ownership: 'shared', apiKey: 'k' })
        .expect(403);
      await t.http.get(`/api/companies/${co.id}/claude-oauth-token-status`).set(bearer(token)).expect(403);
    });
  });

  describe('agents configured from a connection', () => {
    const hire = (companyId: string, adapterType: string, aiConnection: Rec, adapterConfig: Rec = {}) =>
      t.http.post(`/api/companies/${companyId}/agent-hires`).send({
        name: `Agent ${randomUUID().slice(0, 6)}`,
        role: 'engineer',
        adapterType,
        adapterConfig,
        runtimeConfig: { heartbeat: { enabled: false }, aiConnection },
      });

    it('get the key as a secret reference and the base URL, per runtime (the board UI’s responsible-user selection)', async () => {
      const co = await createCompany(t);
      const a = await connect(co.id, { defaultModel: 'claude-haiku-4-5' });
      const o = await connect(co.id, { provider: 'openai', baseUrl: openai.url, apiKey: 'sk-openai' });
      const g = await connect(co.id, { provider: 'gemini', baseUrl: gemini.url, apiKey: 'gm-key' });
      const ref = (secretId: string) => expect.objectContaining({ type: 'secret_ref', secretId, version: 'latest' });
      const claude = (await hire(co.id, 'claude_local', { provider: 'anthropic', method: 'api_key', mode: 'responsible_user' }).expect(201))
        .body;
      expect(claude.agent.adapterConfig).toMatchObject({
        model: 'claude-haiku-4-5',
        env: { ANTHROPIC_API_KEY: ref(a.secretId), ANTHROPIC_BASE_URL: anthropic.url },
      });
      expect(claude.agent.runtimeConfig.aiConnection).toEqual({ provider: 'anthropic', method: 'api_key', mode: 'responsible_user' });
      const codex = (await hire(co.id, 'codex_local', { provider: 'openai', method: 'api_key', mode: 'responsible_user' }).expect(201))
        .body;
      expect(codex.agent.adapterConfig.env).toEqual({ OPENAI_API_KEY: ref(o.secretId), OPENAI_BASE_URL: openai.url });
      const gem = (await hire(co.id, 'gemini_local', { provider: 'gemini', mode: 'shared', connectionId: g.id }).expect(201)).body;
      expect(gem.agent.adapterConfig.env).toEqual({ GEMINI_API_KEY: ref(g.secretId), GOOGLE_GEMINI_BASE_URL: gemini.url });
      // OpenCode takes any provider; its model names the provider
      const oc = (await hire(co.id, 'opencode_local', { provider: 'anthropic', mode: 'responsible_user' }).expect(201)).body;
      expect(oc.agent.adapterConfig).toMatchObject({ model: 'anthropic/claude-haiku-4-5', env: { ANTHROPIC_API_KEY: ref(a.secretId) } });
    });

    it('refuses a selection that names no usable connection (422), or a subscription (422)', async () => {
      const co = await createCompany(t);
      const none = await hire(co.id, 'claude_local', { provider: 'anthropic', method: 'api_key', mode: 'responsible_user' }).expect(422);
      expect(none.body).toMatchObject({ code: 'ai_connection_unavailable', field: 'runtimeConfig.aiConnection' });
      const a = await connect(co.id);
      expect((await hire(co.id, 'codex_local', { provider: 'anthropic', mode: 'responsible_user' }).expect(422)).body.code).toBe(
        'ai_connection_unavailable',
      );
      const other = await createCompany(t);
      const foreign = await connect(other.id);
      await hire(co.id, 'claude_local', { provider: 'anthropic', mode: 'shared', connectionId: foreign.id }).expect(422);
      expect((await hire(co.id, 'claude_local', { provider: 'anthropic', method: 'subscription' }).expect(422)).body.code).toBe(
        'login_method_unsupported',
      );
      await hire(co.id, 'claude_local', { method: 'api_key' }).expect(400);
      expect(a.id).toBeDefined();
    });

    it('PATCH with a newly chosen connection re-binds the key; an unchanged selection keeps the env as edited', async () => {
      const co = await createCompany(t);
      const first = await connect(co.id);
      const agent = (await hire(co.id, 'claude_local', { provider: 'anthropic', method: 'api_key', mode: 'responsible_user' }).expect(201))
        .body.agent;
      const second = await connect(co.id, { name: 'Team', ownership: 'shared', baseUrl: null });
      const patched = await t.http
        .patch(`/api/agents/${agent.id}`)
        .send({
          runtimeConfig: { ...agent.runtimeConfig, aiConnection: { provider: 'anthropic', mode: 'shared', connectionId: second.id } },
        })
        .expect(200);
      expect(patched.body.adapterConfig.env.ANTHROPIC_API_KEY.secretId).toBe(second.secretId);
      // the connection has no base URL of its own: the one the agent had stays (nothing replaces it)
      expect(patched.body.adapterConfig.env.ANTHROPIC_BASE_URL).toBe(anthropic.url);
      const edited = await t.http
        .patch(`/api/agents/${agent.id}`)
        .send({
          runtimeConfig: patched.body.runtimeConfig,
          adapterConfig: { env: { ...patched.body.adapterConfig.env, EXTRA: { type: 'plain', value: 'x' } } },
        })
        .expect(200);
      expect(edited.body.adapterConfig.env).toMatchObject({
        EXTRA: 'x',
        ANTHROPIC_API_KEY: expect.objectContaining({ secretId: second.secretId }),
      });
      expect(first.id).toBeDefined();
    });

    it('the form’s environment test resolves the connection: Claude Code answers a test prompt through it', async () => {
      const co = await createCompany(t);
      await connect(co.id);
      const res = await t.http
        .post(`/api/companies/${co.id}/adapters/claude_local/test-environment`)
        .send({
          adapterConfig: { command: claudeBinary() },
          aiConnection: { provider: 'anthropic', method: 'api_key', mode: 'responsible_user' },
        })
        .expect(200);
      expect(res.body.status).toBe('pass');
      expect(res.body.checks.map((c: Rec) => c.code)).toEqual(
        expect.arrayContaining(['adapter_auth_present', 'adapter_endpoint_reachable', 'adapter_hello_probe_passed']),
      );
      expect(anthropic.requests.some((r) => r.headers['x-api-key'] === KEY)).toBe(true);
      expect(JSON.stringify(res.body)).not.toContain(KEY);
    });

    it('detect-model: the connection’s default model, else the model the CLI chose itself in the last run; candidates include what the key may use', async () => {
      const co = await createCompany(t);
      const c = await connect(co.id);
      const detect = async () => (await t.http.get(`/api/companies/${co.id}/adapters/claude_local/detect-model`).expect(200)).body;
      const before = await detect();
      expect(before).toMatchObject({ model: null, source: null });
      expect(before.candidates).toEqual(expect.arrayContaining(['claude-sonnet-4-5', 'claude-opus-4-5']));
      // a run of an agent that names no model: the CLI picks its own default, which the fake sees
      const agent = (
        await hire(
          co.id,
          'claude_local',
          { provider: 'anthropic', method: 'api_key', mode: 'responsible_user' },
          { command: claudeBinary() },
        ).expect(201)
      ).body.agent;
      const run = await waitRun(t, await wakeRun(t, agent.id), TERMINAL, 90_000);
      expect(run.status).toBe('succeeded');
      const chosen = anthropic.requests[anthropic.requests.length - 1].body.model;
      expect(await detect()).toMatchObject({ model: chosen, source: 'last_run' });
      await t.http
        .patch(`${base(co.id)}/${c.id}`)
        .send({ defaultModel: 'claude-haiku-4-5' })
        .expect(200);
      expect(await detect()).toMatchObject({ model: 'claude-haiku-4-5', source: 'ai_connection' });
    });

    it('active-runs lists the live runs of the agents bound to the connection’s key', async () => {
      const co = await createCompany(t);
      const c = await connect(co.id, { ownership: 'shared' });
      expect((await t.http.get(`${base(co.id)}/${c.id}/active-runs`).expect(200)).body).toEqual([]);
      const agent = (
        await hire(
          co.id,
          'process',
          { provider: 'anthropic', mode: 'shared', connectionId: c.id },
          { command: 'sleep', args: ['60'] },
        ).expect(201)
      ).body.agent;
      const runId = await wakeRun(t, agent.id);
      const runs = await waitFor(async () => {
        const r = (await t.http.get(`${base(co.id)}/${c.id}/active-runs`).expect(200)).body as Rec[];
        return r.length ? r : null;
      }, 'the connection’s active run');
      expect(runs).toEqual([expect.objectContaining({ id: runId, agentId: agent.id, agentName: agent.name })]);
      await t.http.post(`/api/heartbeat-runs/${runId}/cancel`).send({}).expect(200);
      await waitRun(t, runId, TERMINAL);
    });
  });

  it('GET …/claude-oauth-token-status answers null: no Claude subscription token is kept', async () => {
    const co = await createCompany(t);
    const res = await t.http.get(`/api/companies/${co.id}/claude-oauth-token-status`).expect(200);
    expect(res.text).toBe('null');
  });

  describeWithoutCredentials([
    ['get', `/api/companies/${randomUUID()}/ai-connections`],
    [
      'post',
      `/api/companies/${randomUUID()}/ai-connections`,
      { provider: 'anthropic', method: 'api_key', name: 'x', ownership: 'shared', apiKey: 'k' },
    ],
    ['post', `/api/companies/${randomUUID()}/ai-connections/${randomUUID()}/test`, {}],
    ['get', `/api/companies/${randomUUID()}/claude-oauth-token-status`],
  ]);
});

/** In authenticated mode tenants may not name loopback endpoints; the operator's default endpoint is trusted. */
describe('AI connections in authenticated mode', () => {
  let t: TestApp;
  let fake: FakeAnthropic;
  beforeAll(async () => {
    fake = await startFakeAnthropic(() => ({ text: 'hi', usage: { input: 1, output: 1 } }));
    t = await createTestApp({ env: { SERVICE_DEPLOYMENT_MODE: 'authenticated', SERVICE_AI_BASE_URLS: `anthropic=${fake.url}` } });
  });
  afterAll(async () => {
    await fake.close();
    await t.close();
  });

  it('refuses a loopback base URL (no probe: the answer is no oracle) and uses the operator’s default instead', async () => {
    const { company: co, owner } = await ownedCompany(t);
    const body = { provider: 'anthropic', method: 'api_key', name: 'k', ownership: 'personal', apiKey: 'sk-a' };
    const refused = await t.http
      .post(`/api/companies/${co.id}/ai-connections`)
      .set(auth(owner.token))
      .send({ ...body, baseUrl: 'http://127.0.0.1:22' })
      .expect(422);
    expect(refused.body).toMatchObject({ code: 'url_not_allowed', reason: 'loopback' });
    const c = (await t.http.post(`/api/companies/${co.id}/ai-connections`).set(auth(owner.token)).send(body).expect(201)).body;
    expect(c).toMatchObject({ baseUrl: null, effectiveBaseUrl: fake.url, baseUrlSource: 'operator', ownerUserId: owner.id });
    const tested = await t.http.post(`/api/companies/${co.id}/ai-connections/${c.id}/test`).set(auth(owner.token)).send({}).expect(200);
    expect(tested.body.status).toBe('pass');
    // the form's environment test trusts the operator's endpoint too, and refuses the same loopback named by a tenant
    const envTest = (env: Record<string, unknown>, aiConnection?: Record<string, unknown>) =>
      t.http
        .post(`/api/companies/${co.id}/adapters/claude_local/test-environment`)
        .set(auth(owner.token))
        .send({ adapterConfig: { command: claudeBinary(), env }, ...(aiConnection ? { aiConnection } : {}) })
        .expect(200);
    const viaConnection = await envTest({}, { provider: 'anthropic', method: 'api_key', mode: 'responsible_user' });
    expect(viaConnection.body.status).toBe('pass');
    const named = await envTest({ ANTHROPIC_BASE_URL: 'http://127.0.0.1:22', ANTHROPIC_API_KEY: 'sk' });
    expect(named.body.checks).toContainEqual(expect.objectContaining({ code: 'adapter_endpoint_not_allowed', detail: 'loopback' }));
  });
});
