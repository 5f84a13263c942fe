import { createAgent, type AgentRecord } from './agents';
import { createCompany } from './factories';
import { TERMINAL, waitFor, waitRun, wakeRun } from './heartbeat';
import { createTestApp, type TestApp } from './test-app';

/**
 * The shared setup of the coding-agent CLI runtime tests (runtime-{claude,codex,gemini,opencode}):
 * one app that listens (the CLIs call our API), a company whose live events are kept, agents of the
 * runtime under test, the run's cost events, and the cap / hard-stop / run-error cases every runtime
 * must pass, written once.
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

/**
 * A runaway agent (the fake's endless tool-call loop, about 10 cents a turn) is stopped mid-run by
 * `maxCostCents` and by the company's hard-stop budget, and what it spent until then is booked.
 * `loop` scripts the fake; the caps act on the usage the runtime reports per model call.
 */
export function describeCaps(s: RuntimeSuite, loop: () => void): void {
  describe('metered in flight, with caps', () => {
    it(
      'stops a runaway run at maxCostCents, showing its running totals, with its spend booked',
      async () => {
        loop();
        const agent = await s.agent({}, { runtimeConfig: { maxCostCents: 25 } });
        const runId = await wakeRun(s.t, agent.id);
        // the running run shows the usage of its turns so far
        const live = await waitFor(
          async () => {
            const r = (await s.t.http.get(`/api/heartbeat-runs/${runId}`).expect(200)).body;
            return r.usageJson?.turns >= 1 ? r : null;
          },
          'live usage on the run',
          90_000,
          50,
        );
        expect(live.usageJson.final).toBe(false);
        const run = await waitRun(s.t, runId, TERMINAL, 90_000);
        expect(run).toMatchObject({ status: 'cancelled', error_code: 'cap_max_cost_cents' });
        expect(run.error).toContain('maxCostCents 25');
        expect(run.usage_json.costCents).toBeGreaterThan(25);
        const [cost] = await s.costEvents(runId);
        expect(cost.cost_cents).toBe(run.usage_json.costCents);
        expect(Number(cost.output_tokens)).toBe(run.usage_json.outputTokens);
      },
      TIMEOUT,
    );

    it(
      'stops a runaway run at the company’s hard-stop budget and books what it spent',
      async () => {
        const co = await createCompany(s.t);
        await s.t.http.patch(`/api/companies/${co.id}/budgets`).send({ budgetMonthlyCents: 35 }).expect(200);
        loop();
        const agent = await s.agent({}, {}, co.id);
        const run = await s.run(agent.id);
        expect(run).toMatchObject({ status: 'cancelled', error_code: 'budget_hard_stop' });
        expect(run.error).toContain('company');
        const [cost] = await s.costEvents(run.id);
        expect(cost.cost_cents).toBeGreaterThanOrEqual(35);
        const spent = (await s.t.http.get(`/api/companies/${co.id}`).expect(200)).body.spentMonthlyCents;
        expect(spent).toBe(cost.cost_cents);
      },
      TIMEOUT,
    );
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
