import { FakeOpenAi, OpenAiTurn, opencodeBinary, startFakeOpenAi } from '../support/fake-openai';
import { TERMINAL, waitRun, wakeRun } from '../support/heartbeat';
import { describeRunErrors, describeUsageFidelity, useRuntimeApp, type CallUsage } from '../support/runtimes';

/** opencode_local with the real OpenCode CLI (pinned, from the test CLI cache), its openai provider pointed at a loopback fake Responses API. */
describe('opencode_local: the real OpenCode CLI', () => {
  let fake: FakeOpenAi;
  const opencode = opencodeBinary();
  const answer =
    (text: string, usage = { input: 1234, cached: 200, output: 56 }) =>
    (): OpenAiTurn => ({ text, usage });
  const s = useRuntimeApp('opencode_local', () => ({
    command: opencode,
    model: 'openai/gpt-5',
    env: { OPENAI_BASE_URL: fake.url, OPENAI_API_KEY: 'sk-test-dummy' },
  }));
  const agentOf = (config: Record<string, unknown> = {}) => s.agent(config);

  beforeAll(async () => {
    fake = await startFakeOpenAi(answer('hello from opencode'));
  });
  afterAll(async () => {
    await fake.close();
  });

  it('books exactly what the model sent, with the CLI’s own per-step cost, against the model’s provider; the next wake continues the session', async () => {
    const agent = await agentOf({ promptTemplate: 'Marker b81c: keep it short.' });
    const before = { ...fake.sent, requests: fake.requests.length };
    const runId = await wakeRun(s.t, agent.id);
    const run = await waitRun(s.t, runId, TERMINAL, 90_000);
    expect({ status: run.status, error: run.error }).toEqual({ status: 'succeeded', error: null });
    // every model call of the run is the run's model and is booked: no hidden session-title call to a small model
    expect(fake.requests.slice(before.requests).map((r) => r.body.model)).toEqual(['gpt-5']);
    expect({ input: fake.sent.input - before.input, output: fake.sent.output - before.output }).toEqual({
      input: run.usage_json.inputTokens + run.usage_json.cachedInputTokens,
      output: run.usage_json.outputTokens,
    });
    expect(run.usage_json).toMatchObject({
      inputTokens: 1034,
      cachedInputTokens: 200,
      outputTokens: 56,
      provider: 'openai',
      costStatus: 'reported',
    });
    expect(run.result_json).toMatchObject({ sessionId: expect.stringMatching(/^ses_/), summary: 'hello from opencode' });
    expect(JSON.stringify(fake.requests[fake.requests.length - 1].body)).toContain('Marker b81c');
    const [cost] = await s.costEvents(runId);
    expect(cost).toMatchObject({
      provider: 'openai',
      biller: 'openai',
      model: 'openai/gpt-5',
      input_tokens: '1034',
      output_tokens: '56',
      cost_cents: run.usage_json.costCents,
    });

    fake.setScript(answer('second', { input: 500, cached: 0, output: 5 }));
    const run2 = await waitRun(s.t, await wakeRun(s.t, agent.id), TERMINAL, 90_000);
    expect(run2.status).toBe('succeeded');
    expect(run2.result_json).toMatchObject({ sessionId: run.result_json.sessionId, sessionResumed: true });
    expect(run2.usage_json).toMatchObject({ inputTokens: 500, outputTokens: 5 });
    expect(JSON.stringify(fake.requests[fake.requests.length - 1].body.input)).toContain('hello from opencode');
  });

  it('falls back to a fresh session when the stored one is unknown', async () => {
    fake.setScript(answer('fresh'));
    const agent = await agentOf();
    const first = await waitRun(s.t, await wakeRun(s.t, agent.id), TERMINAL, 90_000);
    expect(first.status).toBe('succeeded');
    await s.t.dataSource.query(
      `UPDATE heartbeat_runs SET result_json = jsonb_set(result_json, '{sessionId}', '"ses_doesnotexist"') WHERE id = $1`,
      [first.id],
    );
    const run = await waitRun(s.t, await wakeRun(s.t, agent.id), TERMINAL, 90_000);
    expect(run.status).toBe('succeeded');
    expect(run.result_json.sessionNote).toContain('unknown');
    expect(run.result_json.sessionId).not.toBe('ses_doesnotexist');
  });

  // tolerance: the step in flight when the run is stopped: OpenCode reports a call's usage (step_finish)
  // only once the tools it asked for have run, so a call whose tool runs is in flight too
  const usage = (u: CallUsage) => ({ input: u.input + u.cached, cached: u.cached, output: u.output });
  describeUsageFidelity(s, () => ({
    served: () => fake.served,
    markers: fake.markers,
    origin: new URL(fake.url).origin,
    tool: (command, u): OpenAiTurn => ({ toolCall: { name: 'bash', arguments: { command, description: 'step' } }, usage: usage(u) }),
    text: (text, u): OpenAiTurn => ({ text, usage: usage(u) }),
    held: (until, turn) => ({ ...(turn as OpenAiTurn), hold: until }),
    route: (scripts) => fake.setScript((r) => scripts.turn(r.body) as OpenAiTurn),
    usageAfterTools: true,
  }));

  describeRunErrors(s, 'opencode_local', {
    withoutKey: () => ({ env: { OPENAI_BASE_URL: fake.url } }),
    unreachable: () => ({ env: { OPENAI_BASE_URL: 'http://127.0.0.1:9/v1', OPENAI_API_KEY: 'sk-x' } }),
    keyVar: 'OPENAI_API_KEY',
  });
});
