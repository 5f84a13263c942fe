import * as fs from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { claudeBinary, claudeEnv, startFakeAnthropic } from '../support/fake-anthropic';
import { FIXTURES, waitFor } from '../support/heartbeat';
import { ServiceProcess, startService } from '../support/service-process';
import { createTestDatabase } from '../support/test-app';

jest.setTimeout(120_000);

interface OtlpValue {
  stringValue?: string;
  intValue?: string | number;
  doubleValue?: number;
  boolValue?: boolean;
}
interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  attributes: Array<{ key: string; value: OtlpValue }>;
  links?: Array<{ traceId: string; spanId: string }>;
}
interface Span {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  attrs: Record<string, string | number | boolean | undefined>;
  links: Array<{ traceId: string; spanId: string }>;
  raw: string;
}

const value = (v: OtlpValue) => v.stringValue ?? (v.intValue !== undefined ? Number(v.intValue) : (v.doubleValue ?? v.boolValue));

/** A loopback OTLP/HTTP (JSON) receiver: every span it was sent. */
async function startReceiver(): Promise<{ url: string; spans: Span[]; requests: () => number; close(): Promise<void> }> {
  const spans: Span[] = [];
  let requests = 0;
  const server = http.createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (d: string) => (body += d));
    req.on('end', () => {
      requests++;
      const doc = JSON.parse(body || '{}') as { resourceSpans?: Array<{ scopeSpans?: Array<{ spans?: OtlpSpan[] }> }> };
      for (const rs of doc.resourceSpans ?? [])
        for (const ss of rs.scopeSpans ?? [])
          for (const s of ss.spans ?? [])
            spans.push({
              traceId: s.traceId,
              spanId: s.spanId,
              parentSpanId: s.parentSpanId ?? '',
              name: s.name,
              attrs: Object.fromEntries(s.attributes.map((a) => [a.key, value(a.value)])),
              links: s.links ?? [],
              raw: JSON.stringify(s),
            });
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    spans,
    requests: () => requests,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

const SECRET_VALUE = 'tr4ce-s3cret-value-never-exported';

/** A company, a bound secret, and a process agent that reports one model turn; returns the finished run. */
async function runTracedAgent(svc: ServiceProcess): Promise<{ companyId: string; agentId: string; runId: string }> {
  const company = await svc.api('POST', '/api/companies', { name: `Traced ${Date.now()}` });
  expect(company.status).toBe(201);
  const secret = await svc.api('POST', `/api/companies/${company.body.id}/secrets`, { name: 'BOUND_SECRET', value: SECRET_VALUE });
  expect(secret.status).toBe(201);
  const agent = await svc.api('POST', `/api/companies/${company.body.id}/agents`, {
    name: `tracer-${Date.now()}`,
    role: 'general',
    adapterType: 'process',
    adapterConfig: {
      command: process.execPath,
      args: [path.join(FIXTURES, 'traced-agent.js')],
      timeoutSec: 60,
      env: { BOUND_SECRET: { type: 'secret_ref', secretId: secret.body.id } },
    },
  });
  expect(agent.status).toBe(201);
  const woke = await svc.api('POST', `/api/agents/${agent.body.id}/wakeup`, {
    source: 'on_demand',
    triggerDetail: 'manual',
    reason: 'trace me',
  });
  expect(woke.status).toBe(202);
  const run = await waitFor(
    async () => {
      const r = await svc.api('GET', `/api/heartbeat-runs/${woke.body.id}`);
      return ['succeeded', 'failed', 'cancelled', 'timed_out'].includes(r.body?.status) ? r.body : null;
    },
    'the run to finish',
    60_000,
    100,
  );
  expect(run.status).toBe('succeeded');
  return { companyId: company.body.id, agentId: agent.body.id, runId: woke.body.id };
}

describe('OpenTelemetry traces', () => {
  let databaseUrl: string;
  const dirs: string[] = [];
  const scratch = () => {
    const d = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-tracing-'));
    dirs.push(d);
    return d;
  };
  beforeAll(async () => {
    databaseUrl = await createTestDatabase();
  });
  afterAll(() => {
    for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
  });

  it('exports one trace per run, wake to finish, linked to the waking request, with GenAI usage and no secret', async () => {
    const receiver = await startReceiver();
    const svc = await startService({
      DATABASE_URL: databaseUrl,
      SERVICE_DATA_DIR: scratch(),
      SERVICE_HEARTBEAT_TICK_MS: '200',
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_SERVICE_NAME: 'svc-under-test',
      OTEL_BSP_SCHEDULE_DELAY: '100',
    });
    try {
      const { companyId, agentId, runId } = await runTracedAgent(svc);
      const runSpan = await waitFor(
        async () => receiver.spans.find((s) => s.name === 'heartbeat.run' && s.attrs['service.run_id'] === runId),
        'the run span',
        30_000,
        100,
      );
      const trace = receiver.spans.filter((s) => s.traceId === runSpan.traceId);
      const byName = (name: string) => trace.filter((s) => s.name === name);
      const [wake] = byName('heartbeat.wake');
      expect(wake).toBeDefined();
      expect(wake.parentSpanId).toBe('');
      expect(byName('heartbeat.run.queued')[0].parentSpanId).toBe(wake.spanId);
      expect(runSpan.parentSpanId).toBe(wake.spanId);
      expect(runSpan.attrs).toMatchObject({
        'service.company_id': companyId,
        'service.agent_id': agentId,
        'service.instance_id': expect.any(String),
        'service.run_status': 'succeeded',
        'gen_ai.system': 'anthropic',
        'gen_ai.request.model': 'claude-trace-test',
        'gen_ai.usage.input_tokens': 1234,
        'gen_ai.usage.output_tokens': 56,
        'service.cost_cents': 7,
      });
      expect(byName('heartbeat.run.process')[0].parentSpanId).toBe(runSpan.spanId);
      // the agent's own API calls, with the run's trace context, and its cost booking
      const costRequest = trace.find((s) => s.attrs['http.route'] === '/api/companies/:companyId/cost-events');
      expect(costRequest).toBeDefined();
      expect(costRequest!.name).toBe('POST /api/companies/:companyId/cost-events');
      expect(trace.find((s) => s.attrs['http.route'] === '/api/agents/me')).toBeDefined();
      const cost = byName('gen_ai.cost claude-trace-test')[0];
      expect(cost.parentSpanId).toBe(costRequest!.spanId);
      expect(cost.attrs).toMatchObject({
        'gen_ai.system': 'anthropic',
        'gen_ai.request.model': 'claude-trace-test',
        'gen_ai.usage.input_tokens': 1234,
        'gen_ai.usage.output_tokens': 56,
        'service.cost_cents': 7,
        'service.company_id': companyId,
        'service.agent_id': agentId,
      });
      // the run's trace is linked to the request that woke it
      const wakeRequest = receiver.spans.find((s) => s.attrs['http.route'] === '/api/agents/:agentId/wakeup');
      expect(wakeRequest).toBeDefined();
      expect(wake.links).toEqual([expect.objectContaining({ traceId: wakeRequest!.traceId, spanId: wakeRequest!.spanId })]);
      // database spans: statement kind and table only
      const dbSpans = receiver.spans.filter((s) => s.attrs['db.system'] === 'postgresql' || s.attrs['db.system.name'] === 'postgresql');
      expect(dbSpans.length).toBeGreaterThan(0);
      for (const s of dbSpans) expect(String(s.attrs['db.statement'])).toMatch(/^[A-Z]+( [a-z_][a-z0-9_.]*)?$/);
      expect(dbSpans.some((s) => s.attrs['db.statement'] === 'INSERT cost_events')).toBe(true);
      // no secret, token or key in any span
      const all = receiver.spans.map((s) => s.raw).join('\n');
      expect(all).not.toContain(SECRET_VALUE);
      expect(all).not.toMatch(/eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\./);
      expect(all).not.toMatch(/svc_[a-z]+_[A-Za-z0-9_-]{20,}/);
      expect(all).not.toContain('trace me');
      expect(JSON.stringify(receiver.spans.map((s) => s.attrs))).not.toContain('BOUND_SECRET');
    } finally {
      await svc.stop();
      await receiver.close();
    }
  });

  it('makes each model turn of a CLI runtime (Claude Code) a span of the run’s trace, with its usage and no prompt text', async () => {
    const receiver = await startReceiver();
    const prompt = 'prompt text 5e0b that must stay out of spans';
    // turn 1: a tool call, turn 2: the answer
    const fake = await startFakeAnthropic((r) =>
      JSON.stringify(r.body.messages ?? []).includes('tool_result')
        ? { text: 'answer text 9c1d', usage: { input: 400, output: 9, cacheRead: 30 } }
        : { toolUse: { name: 'Bash', input: { command: 'true', description: 'noop' } }, usage: { input: 300, output: 7 } },
    );
    const svc = await startService({
      DATABASE_URL: databaseUrl,
      SERVICE_DATA_DIR: scratch(),
      SERVICE_HEARTBEAT_TICK_MS: '200',
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_BSP_SCHEDULE_DELAY: '100',
    });
    try {
      const company = await svc.api('POST', '/api/companies', { name: `Turns ${Date.now()}` });
      const agent = await svc.api('POST', `/api/companies/${company.body.id}/agents`, {
        name: `claude-${Date.now()}`,
        role: 'general',
        adapterType: 'claude_local',
        adapterConfig: {
          command: claudeBinary(),
          model: 'claude-sonnet-4-5',
          env: claudeEnv(fake),
          timeoutSec: 120,
          promptTemplate: prompt,
        },
      });
      expect(agent.status).toBe(201);
      const woke = await svc.api('POST', `/api/agents/${agent.body.id}/wakeup`, {
        source: 'on_demand',
        triggerDetail: 'manual',
        reason: prompt,
      });
      expect(woke.status).toBe(202);
      const runId = woke.body.id as string;
      const runSpan = await waitFor(
        async () => receiver.spans.find((x) => x.name === 'heartbeat.run' && x.attrs['service.run_id'] === runId),
        'the run span',
        90_000,
        100,
      );
      expect(runSpan.attrs['service.run_status']).toBe('succeeded');
      const proc = receiver.spans.find((x) => x.traceId === runSpan.traceId && x.name === 'heartbeat.run.process');
      const turns = receiver.spans
        .filter((x) => x.traceId === runSpan.traceId && x.name === 'chat claude-sonnet-4-5')
        .sort((a, b) => Number(a.attrs['service.turn']) - Number(b.attrs['service.turn']));
      expect(turns.map((x) => x.attrs)).toEqual([
        expect.objectContaining({
          'service.turn': 1,
          'gen_ai.operation.name': 'chat',
          'gen_ai.system': 'anthropic',
          'gen_ai.request.model': 'claude-sonnet-4-5',
          'gen_ai.usage.input_tokens': 300,
          // Claude Code prints each call's usage as of its start: the output count is the one it printed
          'gen_ai.usage.output_tokens': expect.any(Number),
          'service.run_id': runId,
          'service.company_id': company.body.id,
          'service.agent_id': agent.body.id,
        }),
        expect.objectContaining({
          'service.turn': 2,
          'gen_ai.usage.input_tokens': 400,
          'gen_ai.usage.cached_input_tokens': 30,
          'gen_ai.usage.output_tokens': expect.any(Number),
        }),
      ]);
      for (const turn of turns) expect(turn.parentSpanId).toBe(proc!.spanId);
      const all = receiver.spans.map((x) => x.raw).join('\n');
      expect(all).not.toContain('5e0b');
      expect(all).not.toContain('answer text 9c1d');
    } finally {
      await svc.stop();
      await receiver.close();
      await fake.close();
    }
  }, 240_000);

  it('exports nothing and loads no OpenTelemetry module with the variables unset, or with OTEL_SDK_DISABLED', async () => {
    const receiver = await startReceiver();
    try {
      const variants: Array<Record<string, string>> = [{}, { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_SDK_DISABLED: 'true' }];
      for (const otel of variants) {
        const out = path.join(scratch(), 'modules.json');
        const svc = await startService({
          DATABASE_URL: databaseUrl,
          SERVICE_DATA_DIR: scratch(),
          SERVICE_HEARTBEAT_TICK_MS: '200',
          NODE_OPTIONS: `--require ${path.join(FIXTURES, 'loaded-modules-probe.js')}`,
          LOADED_MODULES_OUT: out,
          ...otel,
        });
        try {
          await runTracedAgent(svc);
        } finally {
          await svc.stop();
        }
        const loaded = JSON.parse(fs.readFileSync(out, 'utf8')) as string[];
        expect(loaded.some((m) => m.includes(`${path.sep}pg${path.sep}`))).toBe(true);
        // no SDK, exporter or instrumentation (the no-op API package is prom-client's optional dependency)
        expect(loaded.filter((m) => /@opentelemetry[\\/](?!api[\\/])/.test(m))).toEqual([]);
      }
      expect(receiver.requests()).toBe(0);
    } finally {
      await receiver.close();
    }
  });
});
