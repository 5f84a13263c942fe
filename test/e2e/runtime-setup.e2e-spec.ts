import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { createAgentWithKey } from '../support/agents';
import { bearer, createCompany } from '../support/factories';
import { claudeBinary, FakeAnthropic, startFakeAnthropic } from '../support/fake-anthropic';
import { createTestApp, TestApp } from '../support/test-app';

/** The company-scoped adapter routes the board UI's new-agent form calls. */
describe('company adapter routes (the new-agent form)', () => {
  let t: TestApp;
  let fake: FakeAnthropic;
  let companyId: string;
  const base = () => `/api/companies/${companyId}/adapters`;

  beforeAll(async () => {
    t = await createTestApp();
    companyId = (await createCompany(t)).id;
    fake = await startFakeAnthropic(() => ({ text: 'ok', usage: { input: 1, output: 1 } }));
  });
  afterAll(async () => {
    await fake.close();
    await t.close();
  });

  describe('GET …/adapters/:type/models and detect-model', () => {
    it('lists the models of claude_local as { id, label }', async () => {
      const res = await t.http.get(`${base()}/claude_local/models?refresh=1`).expect(200);
      expect(res.body).toEqual(expect.arrayContaining([{ id: 'claude-sonnet-4-5', label: expect.any(String) }]));
    });

    it('answers [] for a type without a model choice and 404 for an unknown type', async () => {
      expect((await t.http.get(`${base()}/process/models`).expect(200)).body).toEqual([]);
      const res = await t.http.get(`${base()}/nope_local/models`).expect(404);
      expect(res.body.error).toBeDefined();
    });

    it('detects the model from the type’s instance env', async () => {
      expect((await t.http.get(`${base()}/claude_local/detect-model`).expect(200)).body).toMatchObject({ model: null, source: null });
      await t.http
        .patch('/api/adapters/claude_local')
        .send({ config: { env: { ANTHROPIC_MODEL: 'claude-haiku-4-5' } } })
        .expect(200);
      const res = await t.http.get(`${base()}/claude_local/detect-model`).expect(200);
      expect(res.body).toMatchObject({
        model: 'claude-haiku-4-5',
        source: 'instance_config',
        candidates: expect.arrayContaining(['claude-sonnet-4-5']),
      });
      await t.http.patch('/api/adapters/claude_local').send({ config: {} }).expect(200);
    });
  });

  describe('POST …/adapters/:type/test-environment', () => {
    it('passes with the binary (and its version), a key and a reachable endpoint', async () => {
      const res = await t.http
        .post(`${base()}/claude_local/test-environment`)
        .send({
          adapterConfig: { command: claudeBinary(), env: { ANTHROPIC_BASE_URL: fake.url } },
          testCredentials: { ANTHROPIC_API_KEY: 'sk-test' },
        })
        .expect(200);
      expect(res.body).toMatchObject({ adapterType: 'claude_local', status: 'pass', testedAt: expect.any(String) });
      const codes = res.body.checks.map((c: { code: string }) => c.code);
      expect(codes).toEqual(['adapter_command_found', 'adapter_auth_present', 'adapter_endpoint_reachable', 'adapter_hello_probe_passed']);
      expect(res.body.checks[0].message).toMatch(/\d+\.\d+\.\d+/);
      expect(JSON.stringify(res.body)).not.toContain('sk-test');
    });

    it('fails clearly: missing binary, missing key, unreachable endpoint', async () => {
      const res = await t.http
        .post(`${base()}/claude_local/test-environment`)
        .send({ adapterConfig: { command: '/nonexistent/claude', env: { ANTHROPIC_BASE_URL: 'http://127.0.0.1:9' } } })
        .expect(200);
      expect(res.body.status).toBe('fail');
      expect(res.body.checks).toEqual([
        expect.objectContaining({ code: 'adapter_command_not_found', level: 'error' }),
        expect.objectContaining({ code: 'adapter_auth_missing', level: 'error', hint: expect.stringContaining('ANTHROPIC_API_KEY') }),
        expect.objectContaining({ code: 'adapter_endpoint_unreachable', level: 'error' }),
      ]);
    });

    it('counts a secret reference as a configured key; reports other types through their executor', async () => {
      const ref = { type: 'secret_ref', secretId: '11111111-1111-4111-8111-111111111111' };
      const res = await t.http
        .post(`${base()}/claude_local/test-environment`)
        .send({ adapterConfig: { command: claudeBinary(), env: { ANTHROPIC_API_KEY: ref, ANTHROPIC_BASE_URL: fake.url } } })
        .expect(200);
      expect(res.body.status).toBe('pass');
      const proc = await t.http
        .post(`${base()}/process/test-environment`)
        .send({ adapterConfig: { command: 'node' } })
        .expect(200);
      expect(proc.body).toMatchObject({ adapterType: 'process', status: 'pass' });
    });

    it('refuses bad input (400) and unknown types (404)', async () => {
      await t.http.post(`${base()}/claude_local/test-environment`).send({ adapterConfig: 'x' }).expect(400);
      await t.http.post(`${base()}/claude_local/test-environment`).send({ agentId: 'nope' }).expect(400);
      await t.http.post(`${base()}/nope_local/test-environment`).send({}).expect(404);
    });
  });

  describe('login sessions and the auth signal', () => {
    it('an API-key login stores the key as a company secret and answers the env binding; the session reads back', async () => {
      expect((await t.http.get(`${base()}/claude_local/auth-signal`).expect(200)).body).toMatchObject({ status: 'absent' });
      const res = await t.http.post(`${base()}/claude_local/login-sessions`).send({ apiKey: 'sk-ant-login-secret' }).expect(201);
      expect(res.body).toMatchObject({ status: 'authenticated', method: 'api_key', adapterType: 'claude_local', prompt: null });
      expect(res.body.envBinding).toEqual({ ANTHROPIC_API_KEY: { type: 'secret_ref', secretId: res.body.sessionId, version: 'latest' } });
      expect(JSON.stringify(res.body)).not.toContain('sk-ant-login-secret');
      const again = await t.http.get(`${base()}/claude_local/login-sessions/${res.body.sessionId}`).expect(200);
      expect(again.body).toMatchObject({ sessionId: res.body.sessionId, status: 'authenticated' });
      await t.http.post(`${base()}/claude_local/login-sessions/${res.body.sessionId}/cancel`).send({}).expect(200);
      await t.http.get(`${base()}/claude_local/login-sessions/active`).expect(404);
      await t.http.get(`${base()}/claude_local/login-sessions/11111111-1111-4111-8111-111111111111`).expect(404);
      const secrets = await t.http.get(`/api/companies/${companyId}/secrets`).expect(200);
      expect(JSON.stringify(secrets.body)).toContain(res.body.sessionId);
    });

    it('refuses a browser/subscription login (422 login_method_unsupported)', async () => {
      const res = await t.http.post(`${base()}/claude_local/login-sessions`).send({}).expect(422);
      expect(res.body.code).toBe('login_method_unsupported');
      await t.http.post(`${base()}/claude_local/login-sessions`).send({ apiKey: 5 }).expect(400);
    });

    it('signals present when the type’s instance env has a key or the CLI has a stored login', async () => {
      await t.http
        .patch('/api/adapters/claude_local')
        .send({ config: { env: { ANTHROPIC_API_KEY: 'sk-instance' } } })
        .expect(200);
      const res = await t.http.get(`${base()}/claude_local/auth-signal?environmentId=local`).expect(200);
      expect(res.body).toEqual({ status: 'present', source: expect.stringContaining('ANTHROPIC_API_KEY') });
      expect(JSON.stringify(res.body)).not.toContain('sk-instance');
      await t.http.patch('/api/adapters/claude_local').send({ config: {} }).expect(200);
    });
  });

  describe('access', () => {
    it('agents may not call them (403), nor may anyone for another company', async () => {
      const { token } = await createAgentWithKey(t, companyId);
      await t.http.get(`${base()}/claude_local/models`).set(bearer(token)).expect(403);
      await t.http.post(`${base()}/claude_local/test-environment`).set(bearer(token)).send({}).expect(403);
      const other = await createCompany(t);
      await t.http.get(`/api/companies/${other.id}/adapters/claude_local/models`).set(bearer(token)).expect(403);
    });
  });

  it('a stored Claude login in the CLI home counts as credentials (environment test)', async () => {
    const home = fs.mkdtempSync(path.join(os.tmpdir(), 'cli-home-'));
    fs.mkdirSync(path.join(home, '.claude'));
    fs.writeFileSync(path.join(home, '.claude', '.credentials.json'), '{}');
    const { environmentReport } = await import('../../src/modules/adapters/runtimes/runtime-environment');
    const r = await environmentReport(
      {
        type: 'claude_local',
        defaultCommand: 'node',
        credentialEnv: ['ANTHROPIC_API_KEY'],
        credentialFiles: ['.claude/.credentials.json'],
        baseUrlEnv: null,
        defaultBaseUrl: fake.url,
      },
      {},
      {},
      home,
    );
    expect(r.checks.find((c) => c.code.startsWith('adapter_auth'))).toMatchObject({ code: 'adapter_auth_present' });
    fs.rmSync(home, { recursive: true, force: true });
  });
});
