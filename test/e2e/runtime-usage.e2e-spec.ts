import * as fs from 'node:fs';
import { randomUUID } from 'node:crypto';
import { Client } from 'pg';
import { RunDispatcher } from '../../src/modules/heartbeat/run-dispatcher.service';
import { claudeBinary, claudeEnv, FakeAnthropic, FakeTurn, startFakeAnthropic } from '../support/fake-anthropic';
import { gate, KeyedScripts, sumServed, type ServedCall } from '../support/fake-model';
import { FakeGemini, GeminiTurn, geminiBinary, startFakeGemini } from '../support/fake-gemini';
import { codexBinary, FakeOpenAi, OpenAiTurn, opencodeBinary, startFakeOpenAi } from '../support/fake-openai';
import { scratchDir, TERMINAL, waitFor } from '../support/heartbeat';
import { compareUsage, type CallUsage } from '../support/runtimes';
import { ServiceProcess, startService } from '../support/service-process';
import { createTestApp, createTestDatabase, type TestApp } from '../support/test-app';

/**
 * What a run's model calls served is booked across the two ways a run is lost to its instance:
 * - the instance is killed with kill -9 mid-run and restarted: each CLI's run is booked what the
 *   service had read and persisted of its stream (every call but the one in flight);
 * - another instance stops the run (a cancellation there) while its model call is still streaming:
 *   the call completes after the stop, and the executing instance books it to the run when its
 *   process ends (its stream is read to the end).
 * The executing instance is the built service as a child process; the stopping one an in-process
 * app on the same database that takes no runs itself.
 */
jest.setTimeout(300_000);

const CALL: CallUsage = { input: 3000, cached: 200, output: 300 };

describe('coding CLIs: usage booked when a run is lost to its instance or stopped by another', () => {
  let databaseUrl: string;
  let dataDir: string;
  let db: Client;
  let svc: ServiceProcess | undefined;
  let other: TestApp;
  let anthropic: FakeAnthropic;
  let openai: FakeOpenAi;
  let gemini: FakeGemini;
  const held = gate();
  const claudeScripts = new KeyedScripts<FakeTurn>(() => ({ text: 'done', usage: { input: 10, output: 1 } }));
  const openaiScripts = new KeyedScripts<OpenAiTurn>(() => ({ text: 'done', usage: { input: 10, output: 1 } }));
  const geminiScripts = new KeyedScripts<GeminiTurn>(() => ({ text: 'done', usage: { prompt: 10, output: 1 } }));

  beforeAll(async () => {
    databaseUrl = await createTestDatabase();
    dataDir = scratchDir('usage-data-');
    db = new Client({ connectionString: databaseUrl });
    await db.connect();
    anthropic = await startFakeAnthropic((r) => claudeScripts.turn(r.body));
    openai = await startFakeOpenAi((r) => openaiScripts.turn(r.body));
    gemini = await startFakeGemini((r) => geminiScripts.turn(r.body));
    // an instance that stops runs but takes none (drained at once: it never claims)
    other = await createTestApp({ databaseUrl });
    await other.app.get(RunDispatcher).drain(0);
  }, 360_000);
  afterAll(async () => {
    held.open();
    await svc?.stop();
    await other?.close();
    await db?.end();
    await Promise.all([anthropic?.close(), openai?.close(), gemini?.close()]);
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  const start = () =>
    startService({
      DATABASE_URL: databaseUrl,
      SERVICE_DATA_DIR: dataDir,
      SERVICE_HEARTBEAT_TICK_MS: '200',
      SERVICE_HEARTBEAT_REAPER_MS: '300',
      // a stop from another instance is noticed at the next keepalive: the late call lands well before
      SERVICE_HEARTBEAT_KEEPALIVE_MS: '5000',
    });
  const api = async (method: string, url: string, body?: unknown) => {
    const res = await svc!.api(method, url, body);
    if (res.status >= 300) throw new Error(`${method} ${url}: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body;
  };
  const runOf = async (runId: string) => (await db.query(`SELECT * FROM heartbeat_runs WHERE id = $1`, [runId])).rows[0];
  const booked = async (runId: string): Promise<CallUsage & { events: number }> =>
    (
      await db.query(
        `SELECT count(*)::int AS events, COALESCE(sum(input_tokens), 0)::int AS input, COALESCE(sum(cached_input_tokens), 0)::int AS cached,
                COALESCE(sum(output_tokens), 0)::int AS output
           FROM cost_events WHERE heartbeat_run_id = $1`,
        [runId],
      )
    ).rows[0];

  /** The four CLIs: their agent's config, and a script of tool calls (`true`) through their own shell tool. */
  const clis = () => {
    const oa = (u: CallUsage) => ({ input: u.input + u.cached, cached: u.cached, output: u.output });
    const openaiEnv = { OPENAI_BASE_URL: openai.url, OPENAI_API_KEY: 'sk-test-dummy' };
    /** n < calls: a tool call; n === calls: one held until the end of the test; then an answer (the retry after the restart) */
    type Script = { calls: number; hold: Promise<unknown> };
    return [
      {
        type: 'claude_local',
        config: { command: claudeBinary(), model: 'claude-sonnet-4-5', env: claudeEnv(anthropic) },
        served: () => anthropic.served,
        script: (key: string, s: Script) =>
          claudeScripts.set(key, (n): FakeTurn => {
            const usage = { input: CALL.input, output: CALL.output, cacheRead: CALL.cached };
            if (n > s.calls) return { text: 'done', usage };
            return {
              toolUse: { name: 'Bash', input: { command: 'true', description: 'step' } },
              usage,
              hold: n === s.calls ? s.hold : undefined,
            };
          }),
        count: (key: string) => claudeScripts.count(key),
      },
      {
        type: 'codex_local',
        config: { command: codexBinary(), model: 'gpt-5', env: openaiEnv },
        served: () => openai.served,
        script: (key: string, s: Script) =>
          openaiScripts.set(key, (n): OpenAiTurn => {
            if (n > s.calls) return { text: 'done', usage: oa(CALL) };
            return {
              toolCall: { name: 'exec_command', arguments: { cmd: 'true' } },
              usage: oa(CALL),
              hold: n === s.calls ? s.hold : undefined,
            };
          }),
        count: (key: string) => openaiScripts.count(key),
      },
      {
        type: 'gemini_local',
        config: {
          command: geminiBinary(),
          model: 'gemini-2.5-pro',
          env: { GOOGLE_GEMINI_BASE_URL: gemini.url, GEMINI_API_KEY: 'test-dummy-key' },
        },
        served: () => gemini.served,
        script: (key: string, s: Script) =>
          geminiScripts.set(key, (n): GeminiTurn => {
            const usage = { prompt: CALL.input + CALL.cached, cached: CALL.cached, output: CALL.output };
            if (n > s.calls) return { text: 'done', usage };
            return { toolCall: { name: 'run_shell_command', args: { command: 'true' } }, usage, hold: n === s.calls ? s.hold : undefined };
          }),
        count: (key: string) => geminiScripts.count(key),
      },
      {
        type: 'opencode_local',
        config: { command: opencodeBinary(), model: 'openai/gpt-5', env: openaiEnv },
        served: () => openai.served,
        script: (key: string, s: Script) =>
          openaiScripts.set(key, (n): OpenAiTurn => {
            if (n > s.calls) return { text: 'done', usage: oa(CALL) };
            const tool = { name: 'bash', arguments: { command: 'true', description: 'step' } };
            return { toolCall: tool, usage: oa(CALL), hold: n === s.calls ? s.hold : undefined };
          }),
        count: (key: string) => openaiScripts.count(key),
      },
    ];
  };

  it('kill -9 of the instance mid-run, then a restart: each CLI’s run is booked what the model served, to within the call in flight', async () => {
    svc = await start();
    const company = await api('POST', '/api/companies', { name: `Usage Co ${Date.now()}` });
    const nonce = randomUUID().slice(0, 8);
    const runs: Array<{ cli: ReturnType<typeof clis>[number]; key: string; runId: string }> = [];
    for (const cli of clis()) {
      const key = `lost-${cli.type}-${nonce}`;
      // three tool calls, then a call the model holds (in flight when the instance dies); the retry after the restart is answered
      cli.script(key, { calls: 3, hold: held.promise });
      const agent = await api('POST', `/api/companies/${company.id}/agents`, {
        name: key,
        role: 'engineer',
        adapterType: cli.type,
        adapterConfig: { timeoutSec: 180, ...cli.config },
      });
      const wake = await api('POST', `/api/agents/${agent.id}/wakeup`, { source: 'on_demand', triggerDetail: 'manual', reason: 'loop' });
      runs.push({ cli, key, runId: wake.id as string });
    }
    // tolerance: the held call (nothing of it was served) and, at most, the last call whose usage was read but not yet persisted
    await waitFor(async () => runs.every((r) => r.cli.count(r.key) >= 4), 'every CLI waiting for its fourth model call', 180_000);
    await svc.crash();
    svc = await start();
    const problems: string[] = [];
    for (const r of runs) {
      const run = await waitFor(
        async () => {
          const row = await runOf(r.runId);
          return TERMINAL.includes(row.status) && (await booked(r.runId)).events > 0 ? row : null;
        },
        `run of ${r.cli.type} ended and booked`,
        60_000,
      );
      if (run.error_code !== 'orphaned_run') problems.push(`${r.cli.type}: ended ${run.status} ${run.error_code}`);
      const served = sumServed(r.cli.served() as ServedCall[], r.runId);
      if (served.calls !== 3) problems.push(`${r.cli.type}: the model served ${served.calls} calls before the crash`);
      problems.push(...compareUsage(`${r.cli.type} after kill -9`, await booked(r.runId), served, 1));
    }
    expect(problems).toEqual([]);
  });

  it('a model call that completes after another instance stopped the run is booked to the run', async () => {
    svc ??= await start();
    const company = await api('POST', '/api/companies', { name: `Late Co ${Date.now()}` });
    const key = `late-${randomUUID().slice(0, 8)}`;
    const late = gate();
    // a tool call, then a call whose input is billed at once and whose answer waits for the stop; then the end
    claudeScripts.set(key, (n) =>
      n === 0
        ? {
            toolUse: { name: 'Bash', input: { command: 'true', description: 'step' } },
            usage: { input: 3000, output: 300, cacheRead: 200 },
          }
        : n === 1
          ? { text: 'finished just after the stop', holdAfterStart: late.promise, usage: { input: 4000, output: 400, cacheRead: 200 } }
          : { text: 'unexpected', usage: { input: 1, output: 1 } },
    );
    const agent = await api('POST', `/api/companies/${company.id}/agents`, {
      name: key,
      role: 'engineer',
      adapterType: 'claude_local',
      adapterConfig: { timeoutSec: 180, command: claudeBinary(), model: 'claude-sonnet-4-5', env: claudeEnv(anthropic) },
    });
    const wake = await api('POST', `/api/agents/${agent.id}/wakeup`, { source: 'on_demand', triggerDetail: 'manual', reason: 'late' });
    const runId = wake.id as string;
    await waitFor(async () => claudeScripts.count(key) >= 2, 'the second model call in flight', 120_000);
    // the first call's usage is on the run's row (the live usage is written every 250 ms)
    await waitFor(async () => Number((await runOf(runId)).usage_json?.inputTokens) >= 3000, 'the first call on the run', 30_000);
    // the stop comes from the other instance; the model's answer ends 0 ms after it
    const cancelled = await other.http.post(`/api/heartbeat-runs/${runId}/cancel`).send({});
    expect(cancelled.status).toBe(200);
    // the stop books what the run's row held then (its first call and the second's input); only then does
    // the model answer, so the rest can only reach the books through the late settlement
    await waitFor(async () => (await booked(runId)).events >= 1, 'the stop booked', 30_000);
    late.open();
    // the executing instance notices the stop at its keepalive, ends the CLI and books what its stream said
    const served = () => sumServed(anthropic.served, runId);
    await waitFor(async () => served().calls === 2 && (await booked(runId)).events >= 2, 'the late call booked', 60_000).catch(
      async (err) => {
        throw new Error(`${(err as Error).message}: booked ${JSON.stringify(await booked(runId))}, served ${JSON.stringify(served())}`);
      },
    );
    expect((await runOf(runId)).status).toBe('cancelled');
    const b = await booked(runId);
    expect({ input: b.input, cached: b.cached, output: b.output }).toEqual({ input: 7000, cached: 400, output: 700 });
    expect((await runOf(runId)).usage_json).toMatchObject({ inputTokens: 7000, outputTokens: 700 });
  });
});
