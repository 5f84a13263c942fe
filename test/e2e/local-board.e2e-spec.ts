import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { createCompany } from '../support/factories';
import { FIXTURES, insertAgent, runLogText, scratchDir, TERMINAL, waitRun, wakeRun } from '../support/heartbeat';
import { createTestApp, TestApp } from '../support/test-app';
import { AUTHENTICATED } from '../support/users';

/**
 * Issue 41, door 2: in local trusted mode a request without credentials is the board only when it
 * comes from a person's process on the host, never from an agent or plugin worker of any instance
 * (the peer's uid from the kernel's socket table); loopback-only routes treat agents as remote.
 */
const asRoot = process.getuid?.() === 0;
const rootIt = asRoot ? it : it.skip;

function probeResult(log: string): { uid: number; calls: Array<{ path: string; useToken: boolean; status: number; body: string }> } {
  const line = log.split('\n').find((l) => l.startsWith('PROBE '));
  if (!line) throw new Error(`no probe output in log:\n${log}`);
  return JSON.parse(line.slice('PROBE '.length));
}

/** `GET url` from a process running as `uid` (no passwd entry needed); its HTTP status. */
function statusAs(uid: number, url: string): Promise<number> {
  const script = `fetch(${JSON.stringify(url)}).then((r) => process.stdout.write(String(r.status)), (e) => process.stdout.write('0:' + e.message))`;
  // asynchronous: the service answering it runs in this process
  const child = spawn('setpriv', ['--reuid', String(uid), '--regid', String(uid), '--clear-groups', '--', process.execPath, '-e', script], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  return new Promise((resolve) => child.on('exit', () => resolve(Number(out))));
}

describe('agents are never the implicit local board (issue 41)', () => {
  let t: TestApp;
  let companyId: string;
  let work: string;

  beforeAll(async () => {
    t = await createTestApp({ listen: true, env: { SERVICE_HEARTBEAT_KEEPALIVE_MS: '100' } });
    companyId = (await createCompany(t)).id;
    work = scratchDir('local-board-');
  });
  afterAll(async () => {
    await t.close();
    fs.rmSync(work, { recursive: true, force: true });
  });

  rootIt(
    'an agent process calling without its token gets 401 (companies, instance settings), 403 on metrics; with its token it acts as itself',
    async () => {
      const calls = [
        ['GET', '/api/companies', false],
        ['GET', '/api/instance/settings', false],
        ['GET', `/api/companies/${companyId}`, false],
        ['POST', '/api/companies', false],
        ['GET', '/api/metrics', false],
        ['GET', '/api/companies', true],
        ['GET', `/api/companies/${companyId}`, true],
      ];
      const agent = await insertAgent(t, companyId, {
        adapterConfig: { command: process.execPath, args: [path.join(FIXTURES, 'board-probe.js'), JSON.stringify(calls)], cwd: work },
      });
      const runId = await wakeRun(t, agent.id);
      expect(await waitRun(t, runId, TERMINAL)).toMatchObject({ status: 'succeeded' });
      const probe = probeResult(await runLogText(t, runId));
      expect(probe.uid).not.toBe(0);
      const status = probe.calls.map((c) => [c.path, c.useToken, c.status]);
      expect(status).toEqual([
        ['/api/companies', false, 401],
        ['/api/instance/settings', false, 401],
        [`/api/companies/${companyId}`, false, 401],
        ['/api/companies', false, 401],
        ['/api/metrics', false, 403],
        ['/api/companies', true, 403],
        [`/api/companies/${companyId}`, true, 200],
      ]);
      expect(probe.calls[0].body).toMatch(/never the local board/);
      // nothing was created by the token-less POST
      const names = (await t.http.get('/api/companies').expect(200)).body.length;
      expect(names).toBe((await t.dataSource.query('SELECT count(*)::int AS n FROM companies'))[0].n);
    },
  );

  rootIt(
    'any uid of the agent range or without an account on the host is refused; the board (root, a host account) still works',
    async () => {
      const url = `${t.baseUrl}/api/companies`;
      // an uid of this instance's range, and one outside it without a passwd entry (another instance's agent)
      expect(await statusAs(2_999_043, url)).toBe(401);
      expect(await statusAs(3_999_043, url)).toBe(401);
      // a host account (nobody) and the test runner (root) are people
      expect(await statusAs(65534, url)).toBe(200);
      expect((await fetch(url)).status).toBe(200);
      expect((await t.http.get('/api/companies')).status).toBe(200);
      expect((await fetch(`${t.baseUrl}/api/metrics`)).status).toBe(200);
    },
  );

  it('a person’s browser is the board only for pages of this machine (DNS rebinding): 403 for another Host or Origin, on the API and its live events', async () => {
    const host = new URL(t.baseUrl!).host;
    const evilHost = await t.http.get('/api/companies').set('Host', 'evil.example.com');
    expect([evilHost.status, evilHost.body.code]).toEqual([403, 'host_not_allowed']);
    const evilOrigin = await t.http
      .post('/api/companies')
      .set('Host', host)
      .set('Origin', 'http://evil.example.com:3100')
      .send({ name: 'rebound' });
    expect([evilOrigin.status, evilOrigin.body.code]).toEqual([403, 'host_not_allowed']);
    const opaque = await t.http.get('/api/instance/settings').set('Origin', 'null');
    expect([opaque.status, opaque.body.code]).toEqual([403, 'host_not_allowed']);
    const events = await t.http
      .get(`/api/companies/${companyId}/events`)
      .set('Host', 'evil.example.com')
      .set('Accept', 'text/event-stream');
    expect(events.status).toBe(403);
    // nothing was created; this machine's own names and pages are the board
    expect((await t.http.get('/api/companies').set('Host', host)).body.some((c: { name: string }) => c.name === 'rebound')).toBe(false);
    await t.http
      .get('/api/companies')
      .set('Host', `localhost:${new URL(t.baseUrl!).port}`)
      .set('Origin', `http://${host}`)
      .expect(200);
  });

  rootIt('authenticated mode: an agent uid is not a loopback caller of /api/metrics', async () => {
    const authed = await createTestApp({ listen: true, env: AUTHENTICATED });
    try {
      expect(await statusAs(2_999_044, `${authed.baseUrl}/api/metrics`)).toBe(403);
      expect((await fetch(`${authed.baseUrl}/api/metrics`)).status).toBe(200);
    } finally {
      await authed.close();
    }
  });
});
