import { FakeGemini, GeminiTurn, geminiBinary, startFakeGemini } from '../support/fake-gemini';
import { TERMINAL, waitRun, wakeRun } from '../support/heartbeat';
import { describeRunErrors, describeUsageFidelity, useRuntimeApp, type CallUsage } from '../support/runtimes';

/**
 * gemini_local with the real Gemini CLI (pinned, from the test CLI cache) against a loopback fake of the Gemini API.
 * Its stream reports usage only in its final `result`; the CLI's chat record has each call's tokens
 * as the call ends, which meters the run while it goes (docs/runtimes-cli.md).
 */
describe('gemini_local: the real Gemini CLI', () => {
  let fake: FakeGemini;
  const answer =
    (text: string, usage = { prompt: 1234, cached: 200, output: 56 }) =>
    (): GeminiTurn => ({ text, usage });
  const s = useRuntimeApp('gemini_local', () => ({
    command: geminiBinary(),
    model: 'gemini-2.5-pro',
    env: { GOOGLE_GEMINI_BASE_URL: fake.url, GEMINI_API_KEY: 'test-dummy-key' },
  }));
  const geminiAgent = (config: Record<string, unknown> = {}) => s.agent(config);

  beforeAll(async () => {
    fake = await startFakeGemini(answer('hello from gemini'));
  });
  afterAll(async () => {
    await fake.close();
  });

  it('books exactly what the model sent (priced from the table), with its instructions delivered; the next wake resumes', async () => {
    const agent = await geminiAgent({ promptTemplate: 'Always be brief (instructions marker 7f3a).' });
    const before = { ...fake.sent, requests: fake.requests.length };
    const runId = await wakeRun(s.t, agent.id);
    const run = await waitRun(s.t, runId, TERMINAL, 90_000);
    expect({ status: run.status, error: run.error }).toEqual({ status: 'succeeded', error: null });
    // every model call of the run is booked (no hidden utility call to another model)
    expect(fake.requests.slice(before.requests).map((r) => /models\/([^:]+):/.exec(r.url)?.[1])).toEqual(['gemini-2.5-pro']);
    expect({ prompt: fake.sent.prompt - before.prompt, output: fake.sent.output - before.output }).toEqual({
      prompt: run.usage_json.inputTokens + run.usage_json.cachedInputTokens,
      output: run.usage_json.outputTokens,
    });
    expect(run.usage_json).toMatchObject({
      inputTokens: 1034,
      cachedInputTokens: 200,
      outputTokens: 56,
      provider: 'google',
      model: 'gemini-2.5-pro',
      final: true,
    });
    expect(run.result_json).toMatchObject({ sessionId: expect.any(String), summary: 'hello from gemini' });
    expect(JSON.stringify(fake.requests[0].body)).toContain('instructions marker 7f3a');
    const [cost] = await s.costEvents(runId);
    // gemini-2.5-pro: $1.25/M input, $0.31/M cached, $10/M output
    expect(cost).toMatchObject({ provider: 'google', input_tokens: '1034', cached_input_tokens: '200', output_tokens: '56' });
    expect(cost.cost_cents).toBe(Math.ceil((1034 * 1.25 + 200 * 0.31 + 56 * 10) / 10_000));

    fake.setScript(answer('second', { prompt: 3000, cached: 0, output: 9 }));
    const run2 = await waitRun(s.t, await wakeRun(s.t, agent.id, { source: 'on_demand', reason: 'again please' }), TERMINAL, 90_000);
    expect(run2.status).toBe('succeeded');
    expect(run2.result_json).toMatchObject({ sessionId: run.result_json.sessionId, sessionResumed: true });
    expect(JSON.stringify(fake.requests[fake.requests.length - 1].body.contents)).toContain('hello from gemini');
    expect(run2.usage_json).toMatchObject({ inputTokens: 3000, outputTokens: 9 });
  });

  it('falls back to a fresh session when the stored one is unknown', async () => {
    fake.setScript(answer('fresh'));
    const agent = await geminiAgent();
    const first = await waitRun(s.t, await wakeRun(s.t, agent.id), TERMINAL, 90_000);
    expect(first.status).toBe('succeeded');
    await s.t.dataSource.query(
      `UPDATE heartbeat_runs SET result_json = jsonb_set(result_json, '{sessionId}', '"00000000-0000-4000-8000-0000000000cc"') WHERE id = $1`,
      [first.id],
    );
    const run = await waitRun(s.t, await wakeRun(s.t, agent.id), TERMINAL, 90_000);
    expect(run.status).toBe('succeeded');
    expect(run.result_json.sessionNote).toContain('unknown');
  });

  // tolerance: the call in flight when the run is stopped (the chat record has a call's tokens before its tools run)
  const usage = (u: CallUsage) => ({ prompt: u.input + u.cached, cached: u.cached, output: u.output });
  describeUsageFidelity(s, () => ({
    served: () => fake.served,
    markers: fake.markers,
    origin: fake.url,
    tool: (command, u): GeminiTurn => ({ toolCall: { name: 'run_shell_command', args: { command } }, usage: usage(u) }),
    text: (text, u): GeminiTurn => ({ text, usage: usage(u) }),
    held: (until, turn) => ({ ...(turn as GeminiTurn), hold: until }),
    route: (scripts) => fake.setScript((r) => scripts.turn(r.body) as GeminiTurn),
  }));

  describeRunErrors(s, 'gemini_local', {
    withoutKey: () => ({ env: { GOOGLE_GEMINI_BASE_URL: fake.url } }),
    unreachable: () => ({ env: { GOOGLE_GEMINI_BASE_URL: 'http://127.0.0.1:9', GEMINI_API_KEY: 'test-dummy-key' } }),
    keyVar: 'GEMINI_API_KEY',
  });
});
