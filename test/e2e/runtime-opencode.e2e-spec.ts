import * as path from 'node:path';
import { readableForAgents } from '../support/readable-for-agents';
import { createAgent } from '../support/agents';
import { createCompany } from '../support/factories';
import { FakeOpenAi, startFakeOpenAi } from '../support/fake-openai';
import { TERMINAL, waitFor, waitRun, wakeRun } from '../support/heartbeat';
import { createTestApp, TestApp } from '../support/test-app';

/** opencode_local with the real OpenCode CLI (devDependency), its openai provider pointed at a loopback fake Responses API. */
describe('opencode_local: the real OpenCode CLI', () => {
  let t: TestApp;
  let fake: FakeOpenAi;
  let companyId: string;
  // the platform package of opencode-ai (the wrapper's other-platform packages are not all on the registry, so its lock entry breaks npm ci)
  const opencodePkg = path.resolve(__dirname, '..', '..', 'node_modules', 'opencode-linux-x64');
  const opencode = readableForAgents(path.join(opencodePkg, 'bin', 'opencode'), opencodePkg);
  const answer =
    (text: string, usage = { input: 1234, cached: 200, output: 56 }) =>
    () => ({ text, usage });

  beforeAll(async () => {
    t = await createTestApp({ listen: true, env: { SERVICE_HEARTBEAT_KEEPALIVE_MS: '100' } });
    companyId = (await createCompany(t)).id;
    fake = await startFakeOpenAi(answer('hello from opencode'));
  });
  afterAll(async () => {
    await fake.close();
    await t.close();
  });

  const agentOf = (adapterConfig: Record<string, unknown> = {}) =>
    createAgent(t, companyId, {
      adapterType: 'opencode_local',
      adapterConfig: {
        command: opencode,
        model: 'openai/gpt-5',
        env: { OPENAI_BASE_URL: fake.url, OPENAI_API_KEY: 'sk-test-dummy' },
        timeoutSec: 120,
        ...adapterConfig,
      },
    });

  it('books exactly what the model sent, with the CLI’s own per-step cost, against the model’s provider; the next wake continues the session', async () => {
    const agent = await agentOf({ promptTemplate: 'Marker b81c: keep it short.' });
    const runId = await wakeRun(t, agent.id);
    const run = await waitRun(t, runId, TERMINAL, 90_000);
    expect({ status: run.status, error: run.error }).toEqual({ status: 'succeeded', error: null });
    expect(run.usage_json).toMatchObject({
      inputTokens: 1034,
      cachedInputTokens: 200,
      outputTokens: 56,
      provider: 'openai',
      costStatus: 'reported',
    });
    expect(run.result_json).toMatchObject({ sessionId: expect.stringMatching(/^ses_/), summary: 'hello from opencode' });
    expect(JSON.stringify(fake.requests[fake.requests.length - 1].body)).toContain('Marker b81c');
    const [cost] = await waitFor(async () => {
      const rows = await t.dataSource.query(
        `SELECT provider, biller, model, cost_cents, input_tokens, output_tokens FROM cost_events WHERE heartbeat_run_id = $1`,
        [runId],
      );
      return rows.length ? rows : null;
    }, 'cost');
    expect(cost).toMatchObject({
      provider: 'openai',
      biller: 'openai',
      model: 'openai/gpt-5',
      input_tokens: '1034',
      output_tokens: '56',
      cost_cents: run.usage_json.costCents,
    });

    fake.setScript(answer('second', { input: 500, cached: 0, output: 5 }));
    const run2 = await waitRun(t, await wakeRun(t, agent.id), TERMINAL, 90_000);
    expect(run2.status).toBe('succeeded');
    expect(run2.result_json).toMatchObject({ sessionId: run.result_json.sessionId, sessionResumed: true });
    expect(run2.usage_json).toMatchObject({ inputTokens: 500, outputTokens: 5 });
    expect(JSON.stringify(fake.requests[fake.requests.length - 1].body.input)).toContain('hello from opencode');
  });

  it('falls back to a fresh session when the stored one is unknown', async () => {
    fake.setScript(answer('fresh'));
    const agent = await agentOf();
    const first = await waitRun(t, await wakeRun(t, agent.id), TERMINAL, 90_000);
    expect(first.status).toBe('succeeded');
    await t.dataSource.query(
      `UPDATE heartbeat_runs SET result_json = jsonb_set(result_json, '{sessionId}', '"ses_doesnotexist"') WHERE id = $1`,
      [first.id],
    );
    const run = await waitRun(t, await wakeRun(t, agent.id), TERMINAL, 90_000);
    expect(run.status).toBe('succeeded');
    expect(run.result_json.sessionNote).toContain('unknown');
    expect(run.result_json.sessionId).not.toBe('ses_doesnotexist');
  });
});
