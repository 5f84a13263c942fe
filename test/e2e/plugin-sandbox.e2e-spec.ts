import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { createCompany } from '../support/factories';
import { insertAgent, TERMINAL, waitFor, waitRun, wakeRun } from '../support/heartbeat';
import { createTestApp, TestApp } from '../support/test-app';

/**
 * Issue 41: plugin workers run in a PID namespace of their own (as root): they cannot list the
 * agents' processes or read their command lines.
 */
const asRoot = process.getuid?.() === 0;

describe('plugin workers cannot see agent processes (issue 41)', () => {
  let t: TestApp;
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'plugin-sandbox-'));

  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => {
    await t.close();
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  (asRoot ? it : it.skip)("a worker's /proc shows none of an agent's processes or command lines", async () => {
    const examples = (await t.http.get('/api/plugins/examples').expect(200)).body as Array<{ pluginKey: string; localPath: string }>;
    const runtime = path.join(examples.find((e) => e.pluginKey === 'word-tools')!.localPath, 'runtime.js');
    const dir = path.join(tmp, 'proc-probe');
    fs.mkdirSync(dir);
    fs.copyFileSync(runtime, path.join(dir, 'runtime.js'));
    const manifest = {
      protocolVersion: 1,
      key: 'proc-probe',
      version: '0.1.0',
      displayName: 'proc probe',
      entry: 'worker.js',
      capabilities: [],
    };
    const tools = [{ name: 'probe', description: 'lists processes', inputSchema: { type: 'object' } }];
    fs.writeFileSync(path.join(dir, 'plugin.json'), JSON.stringify({ ...manifest, tools }));
    fs.writeFileSync(
      path.join(dir, 'worker.js'),
      `const fs = require('fs');
      const { serve } = require('./runtime');
      serve({ 'tools.execute': async (params) => {
        const pids = fs.readdirSync('/proc').filter((n) => /^\\d+$/.test(n));
        const lines = pids.map((p) => { try { return fs.readFileSync('/proc/' + p + '/cmdline', 'utf8'); } catch { return ''; } });
        const marker = (params.input || params.args || {}).marker;
        return { pids: pids.length, self: process.pid, uid: process.getuid(), seen: lines.some((l) => l.includes(marker)) };
      } });`,
    );
    // an agent process whose command line carries a marker, running while the worker looks
    const marker = `agent-marker-${randomBytes(6).toString('hex')}`;
    const c = await createCompany(t);
    const agent = await insertAgent(t, c.id, {
      adapterConfig: { command: process.execPath, args: ['-e', 'setInterval(() => {}, 1000)', marker] },
    });
    const runId = await wakeRun(t, agent.id);
    await waitRun(t, runId, ['running']);
    // the marker is visible from the host (the test runs outside every namespace)
    const visible = () =>
      fs
        .readdirSync('/proc')
        .filter((n) => /^\d+$/.test(n))
        .some((p) => {
          try {
            return fs.readFileSync(`/proc/${p}/cmdline`, 'utf8').includes(marker);
          } catch {
            return false;
          }
        });
    await waitFor(async () => visible(), 'the agent process on the host');

    const p = (await t.http.post('/api/plugins/install').send({ localPath: dir }).expect(201)).body;
    await t.http.post(`/api/plugins/${p.id}/enable`).expect(200);
    const out = (await t.http.post('/api/plugins/tools/execute').send({ tool: 'proc-probe:probe', input: { marker } }).expect(200)).body
      .output;
    expect(out.uid).not.toBe(0);
    expect(out.seen).toBe(false);
    // its own namespace: a handful of processes (its init, itself), with small pids
    expect(out.pids).toBeLessThan(5);
    expect(out.self).toBeLessThan(5);

    await t.http
      .post(`/api/heartbeat-runs/${runId}/cancel`)
      .send({})
      .expect((r) => expect(r.status).toBeLessThan(300));
    await waitRun(t, runId, TERMINAL);
    await t.http.delete(`/api/plugins/${p.id}`).expect(200);
  });
});
