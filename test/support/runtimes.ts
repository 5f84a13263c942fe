import { randomUUID } from 'node:crypto';
import { RunDispatcher } from '../../src/modules/heartbeat/run-dispatcher.service';
import { createAgent, type AgentRecord } from './agents';
import { createCompany } from './factories';
import { KeyedScripts, sumServed, type Markers, type ServedCall, type ServedSum } from './fake-model';
import { TERMINAL, waitFor, waitRun, wakeRun } from './heartbeat';
import { createTestApp, type TestApp } from './test-app';

/**
 * The shared setup of the coding-agent CLI runtime tests (runtime-{claude,codex,gemini,opencode}):
 * one app that listens (the CLIs call our API), a company whose live events are kept, agents of the
 * runtime under test, the run's cost events, and the usage-fidelity and run-error cases every
 * runtime must pass, written once.
 */
/** a real CLI on a loaded machine: generous, the tests poll for their conditions */
const TIMEOUT = 180_000;

export interface RuntimeSuite {
  readonly t: TestApp;
  readonly companyId: string;
  /** an agent of the runtime: its base config (command, model, env pointed at the fake) with `config` over it */
  agent(config?: Record<string, unknown>, extra?: Record<string, unknown>, companyId?: string): Promise<AgentRecord>;
  /** the run's cost events once booking (after the run's commit) has happened */
  costEvents(runId: string): Promise<CostRow[]>;
  runLog(runId: string): Promise<string>;
  /** the base config with `config` over it */
  config(config?: Record<string, unknown>): Record<string, unknown>;
  /** wakes the agent and waits for the run to end */
  run(agentId: string, body?: Record<string, unknown>, timeoutMs?: number): Promise<Record<string, any>>;
}

export interface CostRow {
  provider: string;
  biller: string;
  model: string;
  cost_cents: number;
  cost_status: string;
  input_tokens: string;
  cached_input_tokens: string;
  output_tokens: string;
  issue_id: string | null;
  project_id: string | null;
}

export function useRuntimeApp(adapterType: string, baseConfig: () => Record<string, unknown>): RuntimeSuite {
  let t: TestApp;
  let companyId: string;
  jest.setTimeout(TIMEOUT);
  beforeAll(async () => {
    t = await createTestApp({ listen: true, env: { SERVICE_HEARTBEAT_KEEPALIVE_MS: '100' } });
    companyId = (await createCompany(t)).id;
    // a watcher of the company's live stream (events of unwatched companies are not stored)
    await t.dataSource.query(`INSERT INTO live_event_watch (company_id, until) VALUES ($1, now() + interval '1 hour')`, [companyId]);
  });
  afterAll(async () => {
    await t?.close();
  });
  const costsNow = (runId: string): Promise<CostRow[]> =>
    t.dataSource.query(
      `SELECT provider, biller, model, cost_cents, cost_status, input_tokens, cached_input_tokens, output_tokens, issue_id, project_id
         FROM cost_events WHERE heartbeat_run_id = $1`,
      [runId],
    );
  return {
    get t() {
      return t;
    },
    get companyId() {
      return companyId;
    },
    config: (config = {}) => ({ timeoutSec: 120, ...baseConfig(), ...config }),
    agent: (config = {}, extra = {}, company = companyId) =>
      createAgent(t, company, { adapterType, adapterConfig: { timeoutSec: 120, ...baseConfig(), ...config }, ...extra }),
    costEvents: (runId) => waitFor(async () => ((await costsNow(runId)).length ? costsNow(runId) : null), `cost of ${runId}`),
    runLog: async (runId) => (await t.http.get(`/api/heartbeat-runs/${runId}/log?limitBytes=1048576`)).body.content as string,
    run: async (agentId, body, timeoutMs = 90_000) => waitRun(t, await wakeRun(t, agentId, body), TERMINAL, timeoutMs),
  };
}

/** A model call's usage as a cost event books it: input (uncached, cache writes included), cached input, output. */
export interface CallUsage {
  input: number;
  cached: number;
  output: number;
}

/** How a spec drives its CLI's fake for the usage-fidelity cases. */
export interface CliDriver {
  /** the calls the fake served */
  served(): ServedCall[];
  markers: Markers;
  /** the fake's origin (the agent's tool hits `<origin>/marker/<name>`) */
  origin: string;
  /** a turn asking the CLI's shell tool to run `command` */
  tool(command: string, u: CallUsage): unknown;
  /** a final answer */
  text(text: string, u: CallUsage): unknown;
  /** a turn held until `until` settles (nothing billed before: a call in flight) */
  held(until: Promise<unknown>, turn: unknown): unknown;
  /** points the fake's script at `scripts` (keyed by a token of the agent's name) */
  route(scripts: KeyedScripts<unknown>): void;
  /**
   * The CLI reports a call's usage only once the tools it asked for have run (OpenCode's step):
   * a call whose tool runs still counts as in flight.
   */
  usageAfterTools?: boolean;
}

/** Cost events of a run, summed (the run's usage booked, once per token). */
export async function bookedFor(t: TestApp, runId: string): Promise<CallUsage & { events: number; cents: number }> {
  const [r] = await t.dataSource.query(
    `SELECT count(*)::int AS events, COALESCE(sum(input_tokens), 0)::int AS input, COALESCE(sum(cached_input_tokens), 0)::int AS cached,
            COALESCE(sum(output_tokens), 0)::int AS output, COALESCE(sum(cost_cents), 0)::int AS cents
       FROM cost_events WHERE heartbeat_run_id = $1`,
    [runId],
  );
  return r;
}

/**
 * Booked against served: equal to within `calls` calls in flight (each the run's largest call).
 * Returns the problems (empty when within).
 */
export function compareUsage(what: string, booked: CallUsage, served: ServedSum, calls: number): string[] {
  const out: string[] = [];
  for (const k of ['input', 'cached', 'output'] as const) {
    const slack = calls * served.largest[k];
    if (Math.abs(booked[k] - served[k]) > slack)
      out.push(`${what}: booked ${k} ${booked[k]}, the model served ${served[k]} in ${served.calls} calls (tolerance ${slack})`);
  }
  return out;
}

/** Resolves once this instance's executor of the run is done (its end recorded, its usage settled and booked). */
export async function executorDone(t: TestApp, runId: string): Promise<void> {
  const dispatcher = t.app.get(RunDispatcher);
  await waitFor(async () => !dispatcher.localRunIds().includes(runId), `executor of run ${runId} done`, 60_000);
}

const CALL: CallUsage = { input: 3000, cached: 200, output: 300 };

/**
 * The usage-fidelity cases every CLI must pass, run at once (each its own agent and key): the
 * model's calls are booked to the token whether the run finishes, is cancelled while a tool runs,
 * crosses its maxTokens cap or its company's hard-stop budget. The tolerance is the call in flight
 * when the run is stopped (none while a tool runs, unless the CLI reports a call's usage only after
 * its tools: OpenCode); a cap acts within one call of crossing.
 */
export function describeUsageFidelity(s: RuntimeSuite, driver: () => CliDriver): void {
  describe('usage fidelity: booked = what the model served, to within the call in flight', () => {
    it('finished, cancelled mid-tool, capped (maxTokens) and budget-stopped runs', async () => {
      const d = driver();
      const scripts = new KeyedScripts<unknown>(() => d.text('not scripted', { input: 1, cached: 0, output: 1 }));
      d.route(scripts);
      const nonce = randomUUID().slice(0, 8);
      const key = (c: string) => `fidelity-${c}-${nonce}`;
      // each call's tool takes a moment (as real tools do): a stop has time to land before the call after next
      const loop = (c: string) => scripts.set(key(c), () => d.tool('sleep 0.2', CALL));
      const start = async (c: string, extra: Record<string, unknown> = {}, companyId = s.companyId) => {
        const agent = await s.agent({}, { name: key(c), ...extra }, companyId);
        return wakeRun(s.t, agent.id);
      };
      const settle = async (runId: string) => {
        const run = await waitRun(s.t, runId, TERMINAL, 120_000);
        await executorDone(s.t, runId);
        return { run, booked: await bookedFor(s.t, runId), served: sumServed(d.served(), runId) };
      };
      const finished = async (): Promise<string[]> => {
        scripts.set(key('finished'), (n) => (n < 2 ? d.tool('true', CALL) : d.text('done', CALL)));
        const r = await settle(await start('finished'));
        const status = r.run.status === 'succeeded' ? [] : [`finished: ${r.run.status} ${r.run.error_code}`];
        return [...status, ...compareUsage('finished', r.booked, r.served, 0)];
      };
      const cancelled = async (): Promise<string[]> => {
        const marker = key('tool');
        scripts.set(key('cancelled'), (n) =>
          n === 0 ? d.tool(`curl -s ${d.origin}/marker/${marker} >/dev/null; sleep 60`, CALL) : d.text('late', CALL),
        );
        const runId = await start('cancelled');
        await d.markers.wait(marker);
        await s.t.http.post(`/api/heartbeat-runs/${runId}/cancel`).send({}).expect(200);
        const r = await settle(runId);
        const status = r.run.status === 'cancelled' ? [] : [`cancelled: ${r.run.status}`];
        return [...status, ...compareUsage('cancelled mid-tool', r.booked, r.served, d.usageAfterTools ? 1 : 0)];
      };
      const capped = async (): Promise<string[]> => {
        // 3,500 tokens a call: the third crosses 10,000. The call after next (the fifth) is held until the
        // run has ended (at most 30 s): a cap that acts within one call stops the run while it is held,
        // however long the machine takes to deliver the stop; one that does not lets it be served
        let ended: () => void = () => undefined;
        const over = new Promise<void>((res) => (ended = res));
        const timer = setTimeout(ended, 30_000);
        scripts.set(key('capped'), (n) => (n < 4 ? d.tool('sleep 0.2', CALL) : d.held(over, d.tool('sleep 0.2', CALL))));
        const runId = await start('capped', { runtimeConfig: { maxTokens: 10_000 } });
        void waitRun(s.t, runId, TERMINAL, 60_000)
          .catch(() => undefined)
          .then(() => (clearTimeout(timer), ended()));
        const r = await settle(runId);
        const status = r.run.error_code === 'cap_max_tokens' ? [] : [`capped: ${r.run.status} ${r.run.error_code}`];
        const late = r.served.calls > 4 ? [`capped: the cap acted ${r.served.calls - 3} calls after the crossing one`] : [];
        return [...status, ...late, ...compareUsage('capped', r.booked, r.served, 1)];
      };
      const budget = async (): Promise<string[]> => {
        const co = await createCompany(s.t);
        await s.t.http.patch(`/api/companies/${co.id}/budgets`).send({ budgetMonthlyCents: 3 }).expect(200);
        loop('budget');
        const r = await settle(await start('budget', {}, co.id));
        const status = r.run.error_code === 'budget_hard_stop' ? [] : [`budget: ${r.run.status} ${r.run.error_code}`];
        return [...status, ...compareUsage('budget hard stop', r.booked, r.served, 1)];
      };
      const problems = (await Promise.all([finished(), cancelled(), capped(), budget()])).flat();
      expect(problems).toEqual([]);
    });
  });
}

/**
 * A missing key and an unreachable endpoint each end the run with a clear code, and the board UI's
 * environment test reports them (`keyVar`: the variable the key goes in; `endpoint`: the config of
 * an agent pointed at a closed port).
 */
export function describeRunErrors(
  s: RuntimeSuite,
  adapterType: string,
  cases: {
    withoutKey: () => Record<string, unknown>;
    unreachable: () => Record<string, unknown>;
    keyVar: string;
    /** the agent's maxConnectRetries in the unreachable case (default 2) */
    connectRetries?: number;
  },
): void {
  describe('clear run errors and environment reports', () => {
    it(
      'a missing key: the run fails with runtime_auth_failed; the environment test names the variable',
      async () => {
        const run = await s.run((await s.agent(cases.withoutKey())).id);
        expect(run).toMatchObject({ status: 'failed', error_code: 'runtime_auth_failed' });
        expect(run.error).toBeTruthy();
        const env = await s.t.http
          .post(`/api/companies/${s.companyId}/adapters/${adapterType}/test-environment`)
          .send({ adapterConfig: s.config(cases.withoutKey()) })
          .expect(200);
        expect(env.body.status).toBe('fail');
        expect(env.body.checks).toContainEqual(
          expect.objectContaining({ code: 'adapter_auth_missing', level: 'error', hint: expect.stringContaining(cases.keyVar) }),
        );
      },
      TIMEOUT,
    );

    it(
      'an unreachable endpoint: the run fails with runtime_endpoint_unreachable after a few tries; the environment test says so',
      async () => {
        const run = await s.run((await s.agent({ ...cases.unreachable(), maxConnectRetries: cases.connectRetries ?? 2 })).id);
        expect(run).toMatchObject({ status: 'failed', error_code: 'runtime_endpoint_unreachable' });
        const env = await s.t.http
          .post(`/api/companies/${s.companyId}/adapters/${adapterType}/test-environment`)
          .send({ adapterConfig: s.config(cases.unreachable()) })
          .expect(200);
        expect(env.body.status).toBe('fail');
        expect(env.body.checks).toContainEqual(expect.objectContaining({ code: 'adapter_command_found' }));
        expect(env.body.checks).toContainEqual(expect.objectContaining({ code: 'adapter_endpoint_unreachable', level: 'error' }));
      },
      TIMEOUT,
    );
  });
}
