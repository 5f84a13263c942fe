import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { createAgent } from '../support/agents';
import { createCompany } from '../support/factories';
import { claudeBinary, FakeAnthropic, startFakeAnthropic } from '../support/fake-anthropic';
import { FakeGemini, geminiBinary } from '../support/fake-gemini';
import { codexBinary, FakeOpenAi, opencodeBinary } from '../support/fake-openai';
import { startModelFakes, type ModelFakes } from '../support/model-fakes';
import { createTestApp, TestApp } from '../support/test-app';

type Rec = Record<string, any>;
const plain = (value: string) => ({ type: 'plain', value });

/**
 * The board UI's agent form: env entries as `{ type: "plain", value }` next to secret references,
 * and its environment test and detected model for each coding CLI, using the form's env and base URL.
 */
describe('the agent form: env entries, environment test and detected model', () => {
  let t: TestApp;
  let companyId: string;
  let anthropic: FakeAnthropic;
  let openai: FakeOpenAi;
  let gemini: FakeGemini;
  let fakes: ModelFakes;

  beforeAll(async () => {
    t = await createTestApp();
    companyId = (await createCompany(t)).id;
    fakes = await startModelFakes({ input: 2, output: 1 });
    ({ anthropic, openai, gemini } = fakes);
  });
  afterAll(async () => {
    await fakes.close();
    await t.close();
  });

  it('GET /api/adapters names the coding CLIs as their users know them, and the spec’s placeholders as placeholders', async () => {
    const labels = new Map(((await t.http.get('/api/adapters').expect(200)).body as Rec[]).map((a) => [a.type, a.label]));
    expect(Object.fromEntries(['claude_local', 'codex_local', 'gemini_local', 'opencode_local'].map((k) => [k, labels.get(k)]))).toEqual({
      claude_local: 'Claude Code',
      codex_local: 'Codex',
      gemini_local: 'Gemini CLI',
      opencode_local: 'OpenCode',
    });
    for (const type of ['runtime_a_local', 'runtime_f_local', 'runtime_g', 'gateway_a'])
      expect(labels.get(type)).toContain('spec placeholder');
  });

  describe('env entries', () => {
    it('accepts { type: "plain", value } next to strings and secret references, on create and PATCH, and reads them back', async () => {
      const secret = (await t.http.post(`/api/companies/${companyId}/secrets`).send({ name: 'form-key', value: 'sk-form' }).expect(201))
        .body;
      const agent = await createAgent(t, companyId, {
        adapterType: 'claude_local',
        adapterConfig: {
          env: {
            ANTHROPIC_BASE_URL: plain(anthropic.url),
            ANTHROPIC_API_KEY: { type: 'secret_ref', secretId: secret.id, version: 'latest' },
            LEGACY: 'as-string',
          },
        },
      });
      const ref = { type: 'secret_ref', secretId: secret.id, version: 'latest', delivery: 'both', projectionClass: 'api_key' };
      const env = { ANTHROPIC_BASE_URL: anthropic.url, ANTHROPIC_API_KEY: ref, LEGACY: 'as-string' };
      expect((await t.http.get(`/api/agents/${agent.id}`).expect(200)).body.adapterConfig.env).toEqual(env);
      // the configuration page saves the whole env as the form holds it, plain entries included
      const saved = await t.http
        .patch(`/api/agents/${agent.id}`)
        .send({ adapterConfig: { env: { ...env, ANTHROPIC_BASE_URL: plain('http://127.0.0.1:4999'), MODE: plain('') } } })
        .expect(200);
      expect(saved.body.adapterConfig.env).toEqual({ ...env, ANTHROPIC_BASE_URL: 'http://127.0.0.1:4999', MODE: '' });
      expect((await t.http.get(`/api/agents/${agent.id}`).expect(200)).body.adapterConfig.env.MODE).toBe('');
      // a second save of what was read back changes nothing
      const again = await t.http
        .patch(`/api/agents/${agent.id}`)
        .send({ adapterConfig: { env: saved.body.adapterConfig.env } })
        .expect(200);
      expect(again.body.adapterConfig.env).toEqual(saved.body.adapterConfig.env);
    });

    it('refuses malformed entries with a 4xx naming the field', async () => {
      const agent = await createAgent(t, companyId, { adapterType: 'process', adapterConfig: { command: 'true' } });
      for (const bad of [
        { type: 'plain' },
        { type: 'plain', value: 3 },
        { type: 'plain', value: 'x', extra: 1 },
        { type: 'other', value: 'x' },
      ]) {
        const res = await t.http.patch(`/api/agents/${agent.id}`).send({ adapterConfig: { env: { K: bad } } });
        expect([400, 422]).toContain(res.status);
        expect(JSON.stringify(res.body)).toContain('adapterConfig.env.K');
      }
    });
  });

  describe('POST …/adapters/:type/test-environment with the form’s env and base URL', () => {
    const test = (type: string, adapterConfig: Rec) =>
      t.http.post(`/api/companies/${companyId}/adapters/${type}/test-environment`).send({ adapterConfig }).expect(200);
    const check = (body: Rec, code: string): Rec => (body.checks as Rec[]).find((c) => c.code === code) as Rec;

    it('Claude Code: probes ANTHROPIC_BASE_URL of the form (a plain entry) and answers a test prompt there; says which binary it ran', async () => {
      const before = anthropic.requests.length;
      const res = await test('claude_local', {
        command: claudeBinary(),
        env: { ANTHROPIC_BASE_URL: plain(anthropic.url), ANTHROPIC_API_KEY: plain('sk-ant-form-key') },
      });
      expect(res.body.status).toBe('pass');
      expect(check(res.body, 'adapter_endpoint_reachable').message).toContain(anthropic.url);
      expect(check(res.body, 'adapter_command_found')).toMatchObject({
        detail: claudeBinary(),
        message: expect.stringContaining(`would run ${claudeBinary()}`),
      });
      expect(check(res.body, 'adapter_hello_probe_passed')).toBeDefined();
      expect(anthropic.requests.length).toBeGreaterThan(before);
      expect(anthropic.requests[anthropic.requests.length - 1].headers['x-api-key']).toBe('sk-ant-form-key');
      // an empty plain key is no key (the form's way to unset it)
      const unset = await test('claude_local', {
        command: claudeBinary(),
        env: { ANTHROPIC_BASE_URL: plain(anthropic.url), ANTHROPIC_API_KEY: plain('') },
      });
      expect(check(unset.body, 'adapter_auth_missing')).toBeDefined();
    });

    it('Codex: probes OPENAI_BASE_URL of the form', async () => {
      const res = await test('codex_local', {
        command: codexBinary(),
        env: { OPENAI_BASE_URL: plain(openai.url), OPENAI_API_KEY: plain('sk-openai') },
      });
      expect(res.body.status).toBe('pass');
      expect(check(res.body, 'adapter_endpoint_reachable').message).toContain(openai.url);
    });

    it('Gemini CLI: probes GOOGLE_GEMINI_BASE_URL of the form', async () => {
      const res = await test('gemini_local', {
        command: geminiBinary(),
        env: { GOOGLE_GEMINI_BASE_URL: plain(gemini.url), GEMINI_API_KEY: plain('gm-key') },
      });
      expect(res.body.status).toBe('pass');
      expect(check(res.body, 'adapter_endpoint_reachable').message).toContain(gemini.url);
    });

    it('OpenCode with an Anthropic model probes Anthropic (its base URL and key), not OpenAI', async () => {
      const res = await test('opencode_local', {
        command: opencodeBinary(),
        model: 'anthropic/claude-sonnet-4-5',
        env: { ANTHROPIC_BASE_URL: plain(anthropic.url), ANTHROPIC_API_KEY: plain('sk-ant'), OPENAI_BASE_URL: 'http://127.0.0.1:9' },
      });
      expect(res.body.status).toBe('pass');
      expect(check(res.body, 'adapter_endpoint_reachable').message).toContain(anthropic.url);
      // the test prompt went through OpenCode to the Anthropic fake (its baseURL is ANTHROPIC_BASE_URL + /v1)
      expect(check(res.body, 'adapter_hello_probe_passed')).toBeDefined();
      expect(check(res.body, 'adapter_auth_present').message).toContain('ANTHROPIC_API_KEY');
      // an OpenAI key does not make an Anthropic model work
      const wrongKey = await test('opencode_local', {
        command: opencodeBinary(),
        model: 'anthropic/claude-sonnet-4-5',
        env: { ANTHROPIC_BASE_URL: anthropic.url, OPENAI_API_KEY: 'sk-openai' },
      });
      expect(check(wrongKey.body, 'adapter_auth_missing').hint).toContain('ANTHROPIC_API_KEY');
      // an OpenAI model probes OpenAI's base URL
      const oa = await test('opencode_local', {
        command: opencodeBinary(),
        model: 'openai/gpt-5',
        env: { OPENAI_BASE_URL: plain(openai.url), OPENAI_API_KEY: 'sk-openai' },
      });
      expect(check(oa.body, 'adapter_endpoint_reachable').message).toContain(openai.url);
    });

    it('a private endpoint is not probed (the answer is no window on the host’s network)', async () => {
      const res = await test('claude_local', {
        command: claudeBinary(),
        env: { ANTHROPIC_BASE_URL: 'http://10.255.255.1:8080', ANTHROPIC_API_KEY: 'sk' },
      });
      expect(check(res.body, 'adapter_endpoint_not_allowed')).toMatchObject({ level: 'error', detail: 'private' });
      expect(check(res.body, 'adapter_endpoint_reachable')).toBeUndefined();
      expect(check(res.body, 'adapter_endpoint_unreachable')).toBeUndefined();
    });
  });

  describe('GET …/adapters/:type/detect-model', () => {
    it('answers the model each CLI would use: the type’s instance env, else its own settings, else null with the candidates', async () => {
      for (const [type, modelEnv, model] of [
        ['claude_local', 'ANTHROPIC_MODEL', 'claude-haiku-4-5'],
        ['gemini_local', 'GEMINI_MODEL', 'gemini-2.5-flash'],
      ]) {
        await t.http
          .patch(`/api/adapters/${type}`)
          .send({ config: { env: { [modelEnv]: model } } })
          .expect(200);
        const res = await t.http.get(`/api/companies/${companyId}/adapters/${type}/detect-model`).expect(200);
        expect(res.body).toMatchObject({ model, source: 'instance_config' });
        await t.http.patch(`/api/adapters/${type}`).send({ config: {} }).expect(200);
      }
      await t.http
        .patch('/api/adapters/codex_local')
        .send({ config: { model: 'gpt-5-mini' } })
        .expect(200);
      expect((await t.http.get(`/api/companies/${companyId}/adapters/codex_local/detect-model`).expect(200)).body).toMatchObject({
        model: 'gpt-5-mini',
        source: 'instance_config',
        candidates: expect.arrayContaining(['gpt-5-codex']),
      });
      await t.http.patch('/api/adapters/codex_local').send({ config: {} }).expect(200);
      const none = await t.http.get(`/api/companies/${companyId}/adapters/opencode_local/detect-model`).expect(200);
      expect(none.body).toMatchObject({ model: null, candidates: expect.arrayContaining(['anthropic/claude-sonnet-4-5']) });
    });
  });
});

/** The binary a run starts is the one the operator installed; the environment test applies the run's own checks. */
describe('which CLI binary runs, and the pre-flight that says so', () => {
  let t: TestApp;
  let companyId: string;
  let fake: FakeAnthropic;
  let dir: string;
  const asRoot = process.getuid?.() === 0;

  /** A stand-in CLI: answers --version, else the stream-json result of one turn. */
  const fakeCli = (file: string, version: string, mode: number) => {
    fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o755 });
    fs.writeFileSync(
      file,
      `#!/bin/sh\nif [ "$1" = "--version" ]; then echo "${version} (Claude Code)"; exit 0; fi\ncat >/dev/null\necho '{"type":"result","subtype":"success","is_error":false,"result":"ok","session_id":"s1"}'\n`,
    );
    fs.chmodSync(file, mode);
    return file;
  };

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cli-path-'));
    fs.chmodSync(dir, 0o755);
    fakeCli(path.join(dir, 'node_modules', '.bin', 'claude'), '0.0.1-checkout', 0o755);
    fakeCli(path.join(dir, 'usr', 'bin', 'claude'), '7.7.7', 0o755);
    fakeCli(path.join(dir, 'opt', 'claude'), '8.8.8', 0o755);
    fakeCli(path.join(dir, 'private', 'claude'), '9.9.9', 0o744);
    t = await createTestApp({ listen: true, env: { SERVICE_CLI_PATH: path.join(dir, 'opt-missing') } });
    companyId = (await createCompany(t)).id;
    fake = await startFakeAnthropic(() => ({ text: 'hello', usage: { input: 1, output: 1 } }));
  });
  afterAll(async () => {
    await fake.close();
    await t.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const testEnv = (adapterConfig: Rec, agentId?: string) =>
    t.http
      .post(`/api/companies/${companyId}/adapters/claude_local/test-environment`)
      .send({ adapterConfig, ...(agentId ? { agentId } : {}) })
      .expect(200);
  const found = (body: Rec): Rec => (body.checks as Rec[]).find((c) => c.code.startsWith('adapter_command')) as Rec;

  it('a bare `claude` is looked up on PATH without npm’s node_modules/.bin folders (npm start puts the checkout’s first)', async () => {
    const PATH = [path.join(dir, 'node_modules', '.bin'), path.join(dir, 'usr', 'bin')].join(':');
    const res = await testEnv({ env: { PATH, ANTHROPIC_API_KEY: 'sk', ANTHROPIC_BASE_URL: fake.url } });
    expect(found(res.body)).toMatchObject({ code: 'adapter_command_found', detail: path.join(dir, 'usr', 'bin', 'claude') });
    expect(found(res.body).message).toContain('7.7.7');
    const only = await testEnv({ env: { PATH: path.join(dir, 'node_modules', '.bin'), ANTHROPIC_API_KEY: 'sk' } });
    expect(found(only.body)).toMatchObject({ code: 'adapter_command_not_found', level: 'error' });
    expect(found(only.body).hint).toContain('SERVICE_CLI_PATH');
  });

  (asRoot ? it : it.skip)(
    'a binary the agent’s uid cannot execute fails the pre-flight and the run alike (adapter_command_not_accessible)',
    async () => {
      const binary = path.join(dir, 'private', 'claude');
      const agent = await createAgent(t, companyId, {
        adapterType: 'claude_local',
        adapterConfig: { command: binary, env: { ANTHROPIC_API_KEY: 'sk', ANTHROPIC_BASE_URL: fake.url } },
      });
      const pre = await testEnv({ command: binary, env: { ANTHROPIC_API_KEY: 'sk', ANTHROPIC_BASE_URL: fake.url } }, agent.id);
      expect(pre.body.status).toBe('fail');
      expect(found(pre.body)).toMatchObject({ code: 'adapter_command_not_accessible', level: 'error' });
      expect(found(pre.body).detail).toContain('cannot be executed');
      const agentTest = await t.http.post(`/api/agents/${agent.id}/test-environment`).send({}).expect(200);
      expect(agentTest.body.ok).toBe(false);
      const { TERMINAL, waitRun, wakeRun } = await import('../support/heartbeat');
      const run = await waitRun(t, await wakeRun(t, agent.id), TERMINAL, 60_000);
      expect(run).toMatchObject({ status: 'failed', error_code: 'adapter_command_not_accessible' });
      // made executable for everyone, both pass
      fs.chmodSync(binary, 0o755);
      expect(found((await testEnv({ command: binary, env: { ANTHROPIC_API_KEY: 'sk' } }, agent.id)).body)).toMatchObject({
        code: 'adapter_command_found',
      });
      const ok = await waitRun(t, await wakeRun(t, agent.id), TERMINAL, 60_000);
      expect(ok.error_code).not.toBe('adapter_command_not_accessible');
    },
  );
});

/** SERVICE_CLI_PATH: the operator names where the CLIs live; its folders come before PATH. */
describe('SERVICE_CLI_PATH', () => {
  let t: TestApp;
  let dir: string;
  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cli-opt-'));
    fs.chmodSync(dir, 0o755);
    for (const [sub, v] of [
      ['opt', '8.8.8'],
      ['bin', '7.7.7'],
    ]) {
      fs.mkdirSync(path.join(dir, sub), { mode: 0o755 });
      fs.writeFileSync(path.join(dir, sub, 'claude'), `#!/bin/sh\necho "${v} (Claude Code)"\n`, { mode: 0o755 });
    }
    t = await createTestApp({ env: { SERVICE_CLI_PATH: path.join(dir, 'opt') } });
  });
  afterAll(async () => {
    await t.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('finds the CLI in its folders before PATH, and says which binary it would run', async () => {
    const co = await createCompany(t);
    const res = await t.http
      .post(`/api/companies/${co.id}/adapters/claude_local/test-environment`)
      .send({ adapterConfig: { env: { PATH: path.join(dir, 'bin'), ANTHROPIC_API_KEY: 'sk' } } })
      .expect(200);
    const c = (res.body.checks as Rec[]).find((x) => x.code === 'adapter_command_found');
    expect(c).toMatchObject({ detail: path.join(dir, 'opt', 'claude'), message: expect.stringContaining('8.8.8') });
  });

  it('refuses a relative folder at start', async () => {
    const { loadConfig } = await import('../../src/config/app-config');
    expect(() =>
      loadConfig({ ...process.env, SERVICE_CLI_PATH: 'relative/bin', SERVICE_EPHEMERAL_KEYS: 'true' }, { touchDataDir: false }),
    ).toThrow(/SERVICE_CLI_PATH/);
    expect(() =>
      loadConfig({ ...process.env, SERVICE_AI_BASE_URLS: 'acme=http://x', SERVICE_EPHEMERAL_KEYS: 'true' }, { touchDataDir: false }),
    ).toThrow(/SERVICE_AI_BASE_URLS/);
  });
});
