import { codexBinary, FakeOpenAi, OpenAiTurn, startFakeOpenAi } from '../support/fake-openai';
import { TERMINAL, waitRun, wakeRun } from '../support/heartbeat';
import { describeRunErrors, describeUsageFidelity, useRuntimeApp, type CallUsage } from '../support/runtimes';

/** codex_local with the real Codex CLI (pinned, from the test CLI cache) against a loopback fake of the OpenAI Responses API. */
describe('codex_local: the real Codex CLI', () => {
  let fake: FakeOpenAi;
  const answer =
    (text: string, usage = { input: 1234, cached: 200, output: 56 }) =>
    (): OpenAiTurn => ({ text, usage });
  const s = useRuntimeApp('codex_local', () => ({
    command: codexBinary(),
    model: 'gpt-5',
    env: { OPENAI_BASE_URL: fake.url, OPENAI_API_KEY: 'sk-test-dummy' },
  }));
  const codexAgent = (config: Record<string, unknown> = {}) => s.agent(config);
  const costEvents = (runId: string) => s.costEvents(runId);

  beforeAll(async () => {
    fake = await startFakeOpenAi(answer('hello'));
  });
  afterAll(async () => {
    await fake.close();
  });

  it('is listed with the form’s fields and accepts an agent', async () => {
    const res = await s.t.http.get('/api/adapters/codex_local/config-schema').expect(200);
    for (const k of ['model', 'modelReasoningEffort', 'dangerouslyBypassApprovalsAndSandbox', 'instructionsFilePath', 'extraArgs', 'env'])
      expect(Object.keys(res.body.properties)).toContain(k);
  });

  it('books exactly what the model sent (priced from the table), and a resumed thread books only its own turn', async () => {
    const agent = await codexAgent({ modelReasoningEffort: 'low', promptTemplate: 'You are careful.' });
    const before = { ...fake.sent, requests: fake.requests.length };
    const runId = await wakeRun(s.t, agent.id);
    const run = await waitRun(s.t, runId, TERMINAL, 90_000);
    expect({ status: run.status, error: run.error }).toEqual({ status: 'succeeded', error: null });
    // every model call of the run is booked (no hidden utility call to another model)
    expect(fake.requests.slice(before.requests).map((r) => r.body.model)).toEqual([run.usage_json.model]);
    expect({ input: fake.sent.input - before.input, output: fake.sent.output - before.output }).toEqual({
      input: run.usage_json.inputTokens + run.usage_json.cachedInputTokens,
      output: run.usage_json.outputTokens,
    });
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
    const run2 = await waitRun(s.t, await wakeRun(s.t, agent.id, { source: 'on_demand', reason: 'second wake' }), TERMINAL, 90_000);
    expect(run2.status).toBe('succeeded');
    expect(run2.result_json).toMatchObject({ sessionId: run.result_json.sessionId, sessionResumed: true });
    expect(JSON.stringify(fake.requests[fake.requests.length - 1].body.input)).toContain('hello');
    // the CLI reports the thread's cumulative usage; the run books its own turn only
    expect(run2.usage_json).toMatchObject({ inputTokens: 2000, cachedInputTokens: 1000, outputTokens: 20 });
  });

  it('falls back to a fresh thread when the stored one is unknown', async () => {
    fake.setScript(answer('fresh'));
    const agent = await codexAgent();
    const first = await waitRun(s.t, await wakeRun(s.t, agent.id), TERMINAL, 90_000);
    expect(first.status).toBe('succeeded');
    await s.t.dataSource.query(
      `UPDATE heartbeat_runs SET result_json = jsonb_set(result_json, '{sessionId}', '"00000000-0000-4000-8000-0000000000bb"') WHERE id = $1`,
      [first.id],
    );
    const run = await waitRun(s.t, await wakeRun(s.t, agent.id), TERMINAL, 90_000);
    expect(run.status).toBe('succeeded');
    expect(run.result_json.sessionNote).toContain('unknown');
    expect(run.result_json.sessionId).not.toBe('00000000-0000-4000-8000-0000000000bb');
  });

  // tolerance: the call in flight when the run is stopped. Codex records a call's tokens (token_count in
  // its rollout) only once the tools the call asked for have run: a call whose tool runs is in flight too
  const usage = (u: CallUsage) => ({ input: u.input + u.cached, cached: u.cached, output: u.output });
  describeUsageFidelity(s, () => ({
    served: () => fake.served,
    markers: fake.markers,
    origin: new URL(fake.url).origin,
    tool: (cmd, u): OpenAiTurn => ({ toolCall: { name: 'exec_command', arguments: { cmd } }, usage: usage(u) }),
    text: (text, u): OpenAiTurn => ({ text, usage: usage(u) }),
    held: (until, turn) => ({ ...(turn as OpenAiTurn), hold: until }),
    route: (scripts) => fake.setScript((r) => scripts.turn(r.body) as OpenAiTurn),
    usageAfterTools: true,
  }));

  describeRunErrors(s, 'codex_local', {
    withoutKey: () => ({ env: { OPENAI_BASE_URL: fake.url } }),
    unreachable: () => ({ env: { OPENAI_BASE_URL: 'http://127.0.0.1:9/v1', OPENAI_API_KEY: 'sk-x' } }),
    keyVar: 'OPENAI_API_KEY',
    // Codex reconnects after ~3 s, then ~8 s more: one try keeps the case short (the count is unit-tested)
    connectRetries: 1,
  });
});
