import * as fs from 'node:fs';
import * as http from 'node:http';
import * as os from 'node:os';
import * as path from 'node:path';
import { createCompany } from './factories';
import { sqlAgent, sqlAgentKey } from './sql';
import { createTestApp, TestApp } from './test-app';

/** the fixture scripts agents run (a readable copy when the checkout is not: see global-setup) */
export const FIXTURES = process.env.TEST_FIXTURES_DIR ?? path.join(__dirname, '..', 'fixtures');
export const TERMINAL = ['succeeded', 'failed', 'cancelled', 'timed_out'];

export interface TestAgent {
  id: string;
  companyId: string;
  name: string;
}

/** An agent row by direct SQL. */
export const insertAgent = (
  t: TestApp,
  companyId: string,
  o: {
    adapterType?: string;
    adapterConfig?: Record<string, unknown>;
    runtimeConfig?: Record<string, unknown>;
    status?: string;
    name?: string;
    budgetMonthlyCents?: number;
    spentMonthlyCents?: number;
  } = {},
): Promise<TestAgent> => sqlAgent(t, companyId, o);

/** An API key for an agent by direct SQL; returns the token. */
export const insertAgentKey = (t: TestApp, agent: TestAgent): Promise<string> => sqlAgentKey(t, agent.companyId, agent.id);

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * The least time any wait gives its condition: a wait's bound says when to give up, it asserts no
 * speed, and on two cores shared with other work a step that takes 100 ms alone can take seconds.
 */
const WAIT_FLOOR_MS = 15_000;

export async function waitFor<T>(
  fn: () => Promise<T | null | undefined | false>,
  what: string,
  timeoutMs = 15000,
  intervalMs = 50,
): Promise<T> {
  const end = Date.now() + Math.max(timeoutMs, WAIT_FLOOR_MS);
  let last: unknown;
  while (Date.now() < end) {
    last = await fn();
    if (last) return last as T;
    await sleep(intervalMs);
  }
  throw new Error(`timed out waiting for ${what}; last=${JSON.stringify(last)?.slice(0, 300)}`);
}

export async function runRow(t: TestApp, runId: string): Promise<Record<string, any>> {
  const [r] = await t.dataSource.query('SELECT * FROM heartbeat_runs WHERE id = $1', [runId]);
  return r;
}

/** Waits until the run's status is one of `statuses`; returns the row. */
export function waitRun(t: TestApp, runId: string, statuses: string[], timeoutMs = 15000): Promise<Record<string, any>> {
  return waitFor(
    async () => {
      const r = await runRow(t, runId);
      return r && statuses.includes(r.status) ? r : null;
    },
    `run ${runId} in ${statuses.join('|')}`,
    timeoutMs,
  );
}

export const wakeBody = (extra: Record<string, unknown> = {}) => ({
  source: 'on_demand',
  triggerDetail: 'manual',
  reason: 'test',
  ...extra,
});

export function wake(t: TestApp, agentId: string, body: Record<string, unknown> = wakeBody(), token?: string) {
  const req = t.http.post(`/api/agents/${agentId}/wakeup`).send(body);
  if (token) req.set('Authorization', `Bearer ${token}`);
  return req;
}

/** Wakes and returns the run id from the 202 reply. */
export async function wakeRun(t: TestApp, agentId: string, body: Record<string, unknown> = wakeBody()): Promise<string> {
  const res = await wake(t, agentId, body);
  if (res.status !== 202 || !res.body.id) throw new Error(`wake: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.id;
}

/** Is a process with this pid alive (signal 0)? */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

export interface TestServer {
  url: string;
  requests: Array<{ method: string; url: string; headers: http.IncomingHttpHeaders; body: any }>;
  close(): Promise<void>;
}

/** A real local HTTP server for the http adapter; the handler answers each request. */
export async function startServer(handler: (req: { body: any; url: string }, res: http.ServerResponse) => void): Promise<TestServer> {
  const requests: TestServer['requests'] = [];
  const server = http.createServer((req, res) => {
    let data = '';
    req.on('data', (d) => (data += d));
    req.on('end', () => {
      let body: any;
      try {
        body = data ? JSON.parse(data) : undefined;
      } catch {
        body = data;
      }
      requests.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
      handler({ body, url: req.url ?? '' }, res);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

/** Heartbeat tick settings that make tests fast. */
export const FAST_ENGINE_ENV = {
  SERVICE_HEARTBEAT_TICK_MS: '100',
  SERVICE_HEARTBEAT_REAPER_MS: '150',
  SERVICE_HEARTBEAT_KEEPALIVE_MS: '100',
};

/** A WebSocket server (`ws`) for the gateway adapter: `onMessage(text, send, close)` per connection. */
export async function startWsServer(
  onMessage: (text: string, send: (text: string) => void, close: () => void) => void,
): Promise<TestServer & { received: string[] }> {
  const { WebSocketServer } = await import('ws');
  const received: string[] = [];
  const server = http.createServer((_req, res) => {
    res.statusCode = 426;
    res.end();
  });
  const wss = new WebSocketServer({ server });
  wss.on('connection', (socket) => {
    socket.on('message', (data) => {
      const text = String(data);
      received.push(text);
      onMessage(
        text,
        (t) => socket.send(t),
        () => socket.close(1000),
      );
    });
    socket.on('error', () => undefined);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as { port: number };
  return {
    url: `ws://127.0.0.1:${port}`,
    requests: [],
    received,
    close: () =>
      new Promise<void>((r) => {
        for (const c of wss.clients) c.terminate();
        wss.close();
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

/** A process adapter config that sleeps (a live run). */
export const SLEEP_CONFIG = { command: 'sleep', args: ['120'], timeoutSec: 300 };

/** The env-probe fixture as a process adapter config: writes its env to `file`, then exits with `mode` or sleeps. */
export const probeConfig = (file: string, mode = '0', extra: string[] = []) => ({
  command: process.execPath,
  args: [path.join(FIXTURES, 'heartbeat-env-probe.js'), file, mode, ...extra],
});

export interface HeartbeatFixture {
  t: TestApp;
  companyId: string;
  /** a scratch directory removed afterwards */
  tmp: string;
}

/**
 * A scratch directory agent processes may write in: as root they run as the unprivileged agent
 * user, which cannot enter root's 0700 temporary directories.
 */
export function scratchDir(prefix: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  fs.chmodSync(dir, 0o1777);
  return dir;
}

/** One listening app (child processes call back), a company and a scratch directory for a test file. */
export function useHeartbeatApp(): HeartbeatFixture {
  const f = {} as HeartbeatFixture;
  beforeAll(async () => {
    f.t = await createTestApp({ listen: true, env: { SERVICE_HEARTBEAT_KEEPALIVE_MS: '100' } });
    f.companyId = (await createCompany(f.t)).id;
    f.tmp = scratchDir('hb-e2e-');
  });
  afterAll(async () => {
    await f.t.close();
    fs.rmSync(f.tmp, { recursive: true, force: true });
  });
  return f;
}

/**
 * The host pid of the process started with `marker` among its arguments (a probe's output file):
 * as root agents run in a PID namespace, so the pid a process reports of itself is not the host's.
 * The innermost match is the agent's own process (its wrappers carry the marker too).
 */
export function hostPidOf(marker: string): number | null {
  let found: number | null = null;
  for (const e of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(e)) continue;
    try {
      const argv = fs.readFileSync(`/proc/${e}/cmdline`, 'utf8').split('\0');
      if (argv[0] === process.execPath && argv.includes(marker)) found = Math.max(found ?? 0, Number(e));
    } catch {
      /* gone */
    }
  }
  return found;
}

/** Waits until the probe (heartbeat-env-probe.js) wrote `out`, then returns its host pid. */
export async function probeHostPid(out: string): Promise<number> {
  await waitFor(async () => {
    try {
      return JSON.parse(fs.readFileSync(out, 'utf8')) as { pid: number };
    } catch {
      return null;
    }
  }, 'probe started');
  return waitFor(async () => hostPidOf(out), `the host pid of the probe writing ${out}`);
}

/** The text a run's process wrote (its log's chunks, joined). */
export async function runLogText(t: TestApp, runId: string): Promise<string> {
  const res = await t.http.get(`/api/heartbeat-runs/${runId}/log?limitBytes=1048576`).expect(200);
  return (res.body.content as string)
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l).chunk)
    .join('');
}
