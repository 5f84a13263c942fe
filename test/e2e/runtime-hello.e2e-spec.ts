import { createAgent } from '../support/agents';
import { createCompany } from '../support/factories';
import { claudeBinary, type FakeAnthropic } from '../support/fake-anthropic';
import { geminiBinary, type FakeGemini } from '../support/fake-gemini';
import type { ServedCall } from '../support/fake-model';
import { REJECTED_KEY } from '../support/fake-model-list';
import { codexBinary, opencodeBinary, type FakeOpenAi } from '../support/fake-openai';
import { startModelFakes, type ModelFakes } from '../support/model-fakes';
import { createTestApp, type TestApp } from '../support/test-app';

/**
 * The environment test's prompt (`adapter_hello_probe_passed` / `_failed`), which the board UI's
 * new-agent wizard waits for before it creates an agent: one short model call through each real CLI
 * (devDependencies) against the loopback fakes of the vendors' APIs, with the form's env, as the
 * run's identity. A refused key fails it with a clear message, an unreachable base URL fails before
 * any call, and what a prompt used is booked: the new-agent form's (no agent yet) as a finance event
 * of the company, an agent's as that agent's cost event.
 */
jest.setTimeout(240_000);

interface Cli {
  type: string;
  model: string;
  keyVar: string;
  baseUrlVar: string;
  baseUrl: () => string;
  command: () => string;
  /** what the fake served so far */
  served: () => ServedCall[];
  /** provider and biller of the booked usage */
  provider: string;
}

const FORM_KEY = 'sk-form-key-0123456789';
const CLOSED = 'http://127.0.0.1:9';

describe('the environment test’s prompt through each coding CLI', () => {
  let t: TestApp;
  let companyId: string;
  let anthropic: FakeAnthropic;
  let openai: FakeOpenAi;
  let gemini: FakeGemini;
  let fakes: ModelFakes;

  beforeAll(async () => {
    t = await createTestApp();
    companyId = (await createCompany(t)).id;
    fakes = await startModelFakes({ input: 40, cached: 10, output: 3 });
    ({ anthropic, openai, gemini } = fakes);
  });
  afterAll(async () => {
    await fakes?.close();
    await t?.close();
  });

  const CLIS: Cli[] = [
    {
      type: 'claude_local',
      model: 'claude-sonnet-4-5',
      keyVar: 'ANTHROPIC_API_KEY',
      baseUrlVar: 'ANTHROPIC_BASE_URL',
      baseUrl: () => anthropic.url,
      command: claudeBinary,
      served: () => anthropic.served,
      provider: 'anthropic',
    },
    {
      type: 'codex_local',
      model: 'gpt-5',
      keyVar: 'OPENAI_API_KEY',
      baseUrlVar: 'OPENAI_BASE_URL',
      baseUrl: () => openai.url,
      command: codexBinary,
      served: () => openai.served,
      provider: 'openai',
    },
    {
      type: 'gemini_local',
      model: 'gemini-2.5-flash',
      keyVar: 'GEMINI_API_KEY',
      baseUrlVar: 'GOOGLE_GEMINI_BASE_URL',
      baseUrl: () => gemini.url,
      command: geminiBinary,
      served: () => gemini.served,
      provider: 'google',
    },
    {
      type: 'opencode_local',
      model: 'openai/gpt-5',
      keyVar: 'OPENAI_API_KEY',
      baseUrlVar: 'OPENAI_BASE_URL',
      baseUrl: () => openai.url,
      command: opencodeBinary,
      served: () => openai.served,
      provider: 'openai',
    },
  ];

  const config = (cli: Cli, baseUrl = cli.baseUrl()) => ({ command: cli.command(), model: cli.model, env: { [cli.baseUrlVar]: baseUrl } });
  const test = async (cli: Cli, body: Record<string, unknown>) => {
    const res = await t.http.post(`/api/companies/${companyId}/adapters/${cli.type}/test-environment`).send(body).expect(200);
    if (process.env.SHOW_PROBE) console.log(cli.type, JSON.stringify(res.body.checks, null, 1));
    return res.body as { status: string; checks: Array<{ code: string; level: string; message: string; detail?: string; hint?: string }> };
  };
  const codes = (body: { checks: Array<{ code: string }> }) => body.checks.map((c) => c.code);
  /** the tokens of the calls the fake served since `from` (what booking must record) */
  const servedSince = (cli: Cli, from: number) =>
    cli
      .served()
      .slice(from)
      .reduce((a, c) => ({ input: a.input + c.booked.input, cached: a.cached + c.booked.cached, output: a.output + c.booked.output }), {
        input: 0,
        cached: 0,
        output: 0,
      });
  const financeEvents = async () =>
    (await t.http.get(`/api/companies/${companyId}/costs/finance-events`).expect(200)).body as Array<Record<string, unknown>>;
  const costEvents = (agentId: string) =>
    t.dataSource.query(
      `SELECT agent_id, heartbeat_run_id, provider, biller, model, billing_code, cost_status, cost_cents,
              input_tokens::int, cached_input_tokens::int, output_tokens::int
         FROM cost_events WHERE company_id = $1 AND agent_id = $2`,
      [companyId, agentId],
    );
  const bookings = async () =>
    (await t.dataSource.query(`SELECT (SELECT count(*)::int FROM cost_events) + (SELECT count(*)::int FROM finance_events) AS n`))[0]
      .n as number;

  describe.each(CLIS)('$type', (cli) => {
    it('passes with the form’s key: one model call through the CLI, booked as the company’s finance event (no agent yet)', async () => {
      const from = cli.served().length;
      const before = new Set((await financeEvents()).map((e) => e.id));
      const body = await test(cli, { adapterConfig: config(cli), testCredentials: { [cli.keyVar]: FORM_KEY } });
      expect({ status: body.status, checks: codes(body) }).toEqual({
        status: 'pass',
        checks: ['adapter_command_found', 'adapter_auth_present', 'adapter_endpoint_reachable', 'adapter_hello_probe_passed'],
      });
      const used = servedSince(cli, from);
      expect(used.input + used.output).toBeGreaterThan(0);
      expect(JSON.stringify(body)).not.toContain(FORM_KEY);

      const added = (await financeEvents()).filter((e) => !before.has(e.id));
      expect(added).toHaveLength(1);
      const booked = added[0];
      expect(booked).toMatchObject({
        kind: 'inference_charge',
        direction: 'debit',
        provider: cli.provider,
        biller: cli.provider,
        agentId: null,
        metadata: {
          billingCode: 'environment_test',
          adapterType: cli.type,
          model: cli.model,
          inputTokens: used.input,
          cachedInputTokens: used.cached,
          outputTokens: used.output,
        },
      });
      // priced from the model price table: an estimate, rounded up to a whole cent
      const m = booked.metadata as { costStatus: string; pricedCents: number | null };
      if (m.costStatus === 'unpriced') expect(booked).toMatchObject({ amountCents: 0, estimated: true });
      else expect(booked.amountCents).toBe(Math.ceil(m.pricedCents!));
    });

    it('run for an agent (agentId): the prompt runs as the agent and is booked as its cost event, with no run', async () => {
      const agent = await createAgent(t, companyId, { adapterType: cli.type, adapterConfig: config(cli) });
      const from = cli.served().length;
      const body = await test(cli, { agentId: agent.id, adapterConfig: config(cli), testCredentials: { [cli.keyVar]: FORM_KEY } });
      expect(codes(body)).toContain('adapter_hello_probe_passed');
      const used = servedSince(cli, from);
      expect(await costEvents(agent.id)).toEqual([
        expect.objectContaining({
          agent_id: agent.id,
          heartbeat_run_id: null,
          provider: cli.provider,
          biller: cli.provider,
          model: cli.model,
          billing_code: 'environment_test',
          input_tokens: used.input,
          cached_input_tokens: used.cached,
          output_tokens: used.output,
        }),
      ]);
      const byAgent = await t.http.get(`/api/companies/${companyId}/costs/by-agent`).expect(200);
      expect(JSON.stringify(byAgent.body)).toContain(agent.id);
    });

    it('fails with a clear message when the endpoint refuses the key; nothing is booked', async () => {
      const before = await bookings();
      const body = await test(cli, { adapterConfig: config(cli), testCredentials: { [cli.keyVar]: REJECTED_KEY } });
      expect(body.status).toBe('fail');
      expect(codes(body)).toEqual([
        'adapter_command_found',
        'adapter_auth_present',
        'adapter_endpoint_reachable',
        'adapter_hello_probe_failed',
      ]);
      expect(body.checks[3]).toMatchObject({
        level: 'error',
        message: expect.stringMatching(/did not answer a test prompt: the model endpoint refused the credentials$/),
        detail: expect.stringMatching(/key|401|unauthori[sz]ed/i),
        hint: `check the key in ${cli.keyVar}: ${cli.baseUrl()} refused it`,
      });
      expect(JSON.stringify(body)).not.toContain(REJECTED_KEY);
      expect(await bookings()).toBe(before);
    });

    it('fails before any model call when the base URL is unreachable, naming the variable', async () => {
      const calls = cli.served().length;
      const before = await bookings();
      const body = await test(cli, { adapterConfig: config(cli, CLOSED), testCredentials: { [cli.keyVar]: FORM_KEY } });
      expect(body.status).toBe('fail');
      expect(codes(body)).toEqual(['adapter_command_found', 'adapter_auth_present', 'adapter_endpoint_unreachable']);
      expect(body.checks[2]).toMatchObject({
        level: 'error',
        message: expect.stringMatching(/^http:\/\/127\.0\.0\.1:9(\/v1)? is not reachable$/),
        hint: expect.stringContaining(cli.baseUrlVar),
      });
      expect(cli.served().length).toBe(calls);
      expect(await bookings()).toBe(before);
    });
  });
});
