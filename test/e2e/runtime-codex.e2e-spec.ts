import { createAgent } from '../support/agents';
import { createCompany } from '../support/factories';
import { codexBinary, FakeOpenAi, startFakeOpenAi } from '../support/fake-openai';
import { TERMINAL, waitFor, waitRun, wakeRun } from '../support/heartbeat';
import { createTestApp, TestApp } from '../support/test-app';

/** codex_local with the real Codex CLI (devDependency) against a loopback fake of the OpenAI Responses API. */
describe('codex_local: the real Codex CLI', () => {
  let t: TestApp;
  let fake: FakeOpenAi;
  let companyId: string;
  const answer =
    (text: string, usage = { input: 1234, cached: 200, output: 56 }) =>
    () => ({ text, usage });

  beforeAll(async () => {
    t = await createTestApp({ listen: true, env: { SERVICE_HEARTBEAT_KEEPALIVE_MS: '100' } });
    companyId = (await createCompany(t)).id;
    fake = await startFakeOpenAi(answer('hello'));
  });
  afterAll(async () => {
    await fake.close();
    await t.close();
  });

  const codexAgent = (adapterConfig: Record<string, unknown> = {}) =>
    createAgent(t, companyId, {
      adapterType: 'codex_local',
      adapterConfig: {
        command: codexBinary(),
        model: 'gpt-5',
        env: { OPENAI_BASE_URL: fake.url, OPENAI_API_KEY: 'sk-test-dummy' },
        timeoutSec: 120,
        ...adapterConfig,
      },
    });
  const costEvents = (runId: string) =>
    waitFor(async () => {
      const rows = await t.dataSource.query(
        `SELECT provider, model, cost_cents, cost_status, input_tokens, cached_input_tokens, output_tokens FROM cost_events WHERE heartbeat_run_id = $1`,
        [runId],
      );
      return rows.length ? rows : null;
    }, `cost of ${runId}`);

  it('is listed with the form’s fields and accepts an agent', async () => {
    const res = await t.http.get('/api/adapters/codex_local/config-schema').expect(200);
    for (const k of ['model', 'modelReasoningEffort', 'dangerouslyBypassApprovalsAndSandbox', 'instructionsFilePath', 'extraArgs', 'env'])
      expect(Object.keys(res.body.properties)).toContain(k);
  });

  it('books exactly what the model sent (priced from the table), and a resumed thread books only its own turn', async () => {
    const agent = await codexAgent({ modelReasoningEffort: 'low', promptTemplate: 'You are careful.' });
    const runId = await wakeRun(t, agent.id);
    const run = await waitRun(t, runId, TERMINAL, 90_000);
    expect({ status: run.status, error: run.error }).toEqual({ status: 'succeeded', error: null });
    expect(run.usage_json).toMatchObject({
      inputTokens: 1034,
      cachedInputTokens: 200,
      outputTokens: 56,
      provider: 'openai',
      costStatus: 'priced',
      final: true,
    });
    expect(run.result_json).toMatchObject({ sessionId: expect.any(String), summary: 'hello', sessionResumed: false });
    expect(JSON.stringify(fake.requests[0].body)).toContain('You are careful.');
    const [cost] = await costEvents(runId);
    // gpt-5: $1.25/M input, $0.125/M cached, $10/M output
    expect(cost).toMatchObject({
      provider: 'openai',
      model: 'gpt-5',
      cost_status: 'reported',
      input_tokens: '1034',
      cached_input_tokens: '200',
      output_tokens: '56',
    });
    expect(cost.cost_cents).toBe(Math.ceil((1034 * 1.25 + 200 * 0.125 + 56 * 10) / 10_000));

    fake.setScript(answer('again', { input: 3000, cached: 1000, output: 20 }));
    const run2 = await waitRun(t, await wakeRun(t, agent.id, { source: 'on_demand', reason: 'second wake' }), TERMINAL, 90_000);
    expect(run2.status).toBe('succeeded');
    expect(run2.result_json).toMatchObject({ sessionId: run.result_json.sessionId, sessionResumed: true });
    expect(JSON.stringify(fake.requests[fake.requests.length - 1].body.input)).toContain('hello');
    // the CLI reports the thread's cumulative usage; the run books its own turn only
    expect(run2.usage_json).toMatchObject({ inputTokens: 2000, cachedInputTokens: 1000, outputTokens: 20 });
  });

  it('falls back to a fresh thread when the stored one is unknown', async () => {
    fake.setScript(answer('fresh'));
    const agent = await codexAgent();
    const first = await waitRun(t, await wakeRun(t, agent.id), TERMINAL, 90_000);
    expect(first.status).toBe('succeeded');
    await t.dataSource.query(
      `UPDATE heartbeat_runs SET result_json = jsonb_set(result_json, '{sessionId}', '"00000000-0000-4000-8000-0000000000bb"') WHERE id = $1`,
      [first.id],
    );
    const run = await waitRun(t, await wakeRun(t, agent.id), TERMINAL, 90_000);
    expect(run.status).toBe('succeeded');
    expect(run.result_json.sessionNote).toContain('unknown');
    expect(run.result_json.sessionId).not.toBe('00000000-0000-4000-8000-0000000000bb');
  });

  it('gives clear run errors: missing key, unreachable endpoint', async () => {
    const noKey = await codexAgent({ env: { OPENAI_BASE_URL: fake.url } });
    const a = await waitRun(t, await wakeRun(t, noKey.id), TERMINAL, 90_000);
    expect(a).toMatchObject({ status: 'failed', error_code: 'runtime_auth_failed' });
    const down = await codexAgent({ env: { OPENAI_BASE_URL: 'http://127.0.0.1:9/v1', OPENAI_API_KEY: 'sk-x' }, maxConnectRetries: 2 });
    const b = await waitRun(t, await wakeRun(t, down.id), TERMINAL, 90_000);
    expect(b).toMatchObject({ status: 'failed', error_code: 'runtime_endpoint_unreachable' });
  });
});
