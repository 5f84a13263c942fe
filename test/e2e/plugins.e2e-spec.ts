import * as fs from 'node:fs';
import * as http from 'node:http';
import * as os from 'node:os';
import * as path from 'node:path';
import * as tar from 'tar';
import { LiveEventBus } from '../../src/common/events/live-event-bus';
import { LiveEventHub } from '../../src/common/events/live-event-hub';
import { PluginsScheduler } from '../../src/modules/plugins/plugins.jobs';
import { createAgentWithKey } from '../support/agents';
import { createCompany } from '../support/factories';
import { createTestApp, TestApp } from '../support/test-app';
import { auth, AUTHENTICATED, instanceAdmin } from '../support/users';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** `ms` is when to give up (at least 15 s: on a loaded machine a restart can take seconds), not a speed asserted. */
async function waitFor<T>(fn: () => Promise<T | undefined | null | false>, ms = 15_000): Promise<T> {
  const end = Date.now() + Math.max(ms, 15_000);
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > end) throw new Error('condition not met in time');
    await sleep(50);
  }
}

/** A local HTTP server that records POSTs (the digest's webhook URL). */
async function recorder(): Promise<{ url: string; bodies: unknown[]; headers: http.IncomingHttpHeaders[]; close: () => Promise<void> }> {
  const bodies: unknown[] = [];
  const headers: http.IncomingHttpHeaders[] = [];
  const server = http.createServer((req, res) => {
    let data = '';
    req.on('data', (c) => (data += c));
    req.on('end', () => {
      bodies.push(JSON.parse(data || 'null'));
      headers.push(req.headers);
      res.writeHead(200).end('{}');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as { port: number }).port;
  return { url: `http://127.0.0.1:${port}/digest`, bodies, headers, close: () => new Promise((r) => server.close(() => r())) };
}

describe('plugins', () => {
  let t: TestApp;
  let examples: Record<string, { localPath: string; packageName: string }>;
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'plugins-e2e-'));
  // local folders are read with the rights of the company's agents (any user here)
  fs.chmodSync(tmp, 0o755);

  beforeAll(async () => {
    t = await createTestApp({ env: { SERVICE_PLUGINS_FOLDER_ROOTS: tmp } });
    const res = await t.http.get('/api/plugins/examples').expect(200);
    examples = Object.fromEntries(res.body.map((e: { pluginKey: string }) => [e.pluginKey, e]));
  });
  afterAll(async () => {
    await t.close();
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  const install = async (localPath: string) => (await t.http.post('/api/plugins/install').send({ localPath }).expect(201)).body;
  /** A plugin folder under tmp: the examples' runtime.js, a manifest with one tool `probe`, and `worker` as worker.js. */
  const probePlugin = (key: string, capabilities: string[], worker: string): string => {
    const dir = path.join(tmp, key);
    fs.mkdirSync(dir);
    fs.copyFileSync(path.join(examples['word-tools'].localPath, 'runtime.js'), path.join(dir, 'runtime.js'));
    const manifest = { protocolVersion: 1, key, version: '0.1.0', displayName: key, entry: 'worker.js', capabilities };
    const tools = [{ name: 'probe', description: 'calls the host', inputSchema: { type: 'object' } }];
    fs.writeFileSync(path.join(dir, 'plugin.json'), JSON.stringify({ ...manifest, tools }));
    fs.writeFileSync(path.join(dir, 'worker.js'), worker);
    return dir;
  };

  it('lists the bundled examples with the fields of the bundled plugin entry; ui-contributions is [] with nothing enabled', async () => {
    expect(Object.keys(examples).sort()).toEqual(['daily-digest', 'team-pulse', 'word-tools']);
    expect(examples['word-tools']).toMatchObject({
      packageName: '@service-plugins/word-tools',
      displayName: 'Word tools',
      tag: 'example',
      experimental: true,
      localPath: expect.any(String),
    });
    expect((await t.http.get('/api/plugins/ui-contributions').expect(200)).body).toEqual([]);
  });

  it('refuses invalid manifests, unknown sources and a second install of a key', async () => {
    const bad = path.join(tmp, 'bad');
    fs.mkdirSync(bad);
    fs.writeFileSync(
      path.join(bad, 'plugin.json'),
      JSON.stringify({ protocolVersion: 99, key: 'Bad Key', version: '1', displayName: 'x', entry: 'w.js' }),
    );
    const res = await t.http.post('/api/plugins/install').send({ localPath: bad }).expect(422);
    expect(res.body.code).toBe('plugin_manifest_invalid');
    await t.http
      .post('/api/plugins/install')
      .send({ localPath: path.join(tmp, 'nope') })
      .expect(422);
    await t.http.post('/api/plugins/install').send({}).expect(422);
    await t.http.post('/api/plugins/install').send({ localPath: 5 }).expect(400);
  });

  it('agents are refused on administration routes (403)', async () => {
    const c = await createCompany(t);
    const { token } = await createAgentWithKey(t, c.id);
    const auth = { Authorization: `Bearer ${token}` };
    await t.http.get('/api/plugins').set(auth).expect(403);
    await t.http.post('/api/plugins/install').set(auth).send({ localPath: examples['word-tools'].localPath }).expect(403);
    await t.http.get('/api/plugins/examples').set(auth).expect(403);
  });

  it('word-tools from a tarball: enable, tool list and call (schema checked, time limit), webhook, disable, uninstall', async () => {
    const tgz = path.join(tmp, 'word-tools.tgz');
    // npm pack layout: package/<files>
    const stage = path.join(tmp, 'stage');
    fs.cpSync(examples['word-tools'].localPath, path.join(stage, 'package'), { recursive: true });
    await tar.c({ gzip: true, file: tgz, cwd: stage }, ['package']);
    const p = await install(tgz);
    expect(p).toMatchObject({ pluginKey: 'word-tools', status: 'disabled', source: { kind: 'tarball' } });
    await t.http.post('/api/plugins/install').send({ localPath: tgz }).expect(409);

    // disabled: no tools, webhook 409
    expect((await t.http.get('/api/plugins/tools').expect(200)).body).toEqual([]);
    await t.http.post(`/api/plugins/${p.id}/webhooks/echo`).send({ a: 1 }).expect(409);

    await t.http.post(`/api/plugins/${p.id}/enable`).expect(200);
    const tools = (await t.http.get('/api/plugins/tools').expect(200)).body;
    expect(tools.map((x: { key: string }) => x.key).sort()).toEqual(['word-tools:sleep', 'word-tools:word-count']);

    const c = await createCompany(t);
    const { token } = await createAgentWithKey(t, c.id);
    const run = await t.http
      .post('/api/plugins/tools/execute')
      .set('Authorization', `Bearer ${token}`)
      .send({ tool: 'word-tools:word-count', input: { text: 'three small words' } })
      .expect(200);
    expect(run.body.output).toEqual({ words: 3, characters: 17, companyId: c.id });
    const bad = await t.http
      .post('/api/plugins/tools/execute')
      .send({ tool: 'word-count', input: { text: 5 } })
      .expect(422);
    expect(bad.body.code).toBe('plugin_tool_input_invalid');
    await t.http.post('/api/plugins/tools/execute').send({ tool: 'word-tools:nope', input: {} }).expect(404);
    const slow = await t.http
      .post('/api/plugins/tools/execute')
      .send({ tool: 'sleep', input: { ms: 2000 } })
      .expect(502);
    expect(slow.body.code).toBe('plugin_worker_timeout');

    // webhook: delivered to the worker, its answer returned (no credentials needed)
    const hook = await t.http.post(`/api/plugins/${p.id}/webhooks/echo`).set('Authorization', '').send({ hello: 'world' });
    expect(hook.status).toBe(202);
    expect(hook.body).toEqual({ endpoint: 'echo', received: { hello: 'world' }, contentType: 'application/json' });
    await t.http.post(`/api/plugins/${p.id}/webhooks/nope`).send({}).expect(404);

    const health = (await t.http.get(`/api/plugins/${p.id}/health`).expect(200)).body;
    expect(health).toMatchObject({ healthy: true, worker: { state: 'running', pid: expect.any(Number) } });
    const pid = health.worker.pid as number;

    await t.http.post(`/api/plugins/${p.id}/disable`).expect(200);
    expect(() => process.kill(pid, 0)).toThrow(); // the worker is gone
    expect((await t.http.get('/api/plugins/tools').expect(200)).body).toEqual([]);
    await t.http.delete(`/api/plugins/${p.id}`).expect(200);
    await t.http.get(`/api/plugins/${p.id}`).expect(404);
    await t.http.get('/api/plugins/not-a-uuid').expect(404);
  });

  it('team-pulse: config and config test, ui contributions, dashboard, data, crash and restart, events delivered after the restart, local folders', async () => {
    const p = await install(examples['team-pulse'].localPath);
    await t.http.post(`/api/plugins/${p.id}/enable`).expect(200);
    const ui = (await t.http.get('/api/plugins/ui-contributions').expect(200)).body;
    // the board UI's plugin manager reads the installed manifest of each record
    const record = (await t.http.get(`/api/plugins/${p.id}`).expect(200)).body;
    expect(record.manifestJson).toMatchObject({ key: 'team-pulse', version: '1.0.0', ui: { slots: [{ slot: 'dashboard.widget' }] } });
    expect((await t.http.get('/api/plugins').expect(200)).body.find((r: { id: string }) => r.id === p.id).manifestJson.key).toBe(
      'team-pulse',
    );
    // one entry per plugin, as the board UI reads it (it iterates each entry's slots and launchers)
    expect(ui).toEqual([
      {
        pluginId: p.id,
        pluginKey: 'team-pulse',
        displayName: 'Team pulse',
        version: '1.0.0',
        slots: [expect.objectContaining({ slot: 'dashboard.widget', label: 'Team pulse' })],
        launchers: [expect.objectContaining({ slot: 'sidebar.launcher', label: 'Pulse settings' })],
      },
    ]);

    // config: defaults resolved, test validates without saving, write persists
    expect((await t.http.get(`/api/plugins/${p.id}/config`).expect(200)).body.config).toEqual({ title: 'Team pulse', dailyTarget: 20 });
    const test = (
      await t.http
        .post(`/api/plugins/${p.id}/config/test`)
        .send({ config: { dailyTarget: 0 } })
        .expect(200)
    ).body;
    expect(test.ok).toBe(false);
    expect(test.problems.join()).toMatch(/dailyTarget/);
    const blank = (
      await t.http
        .post(`/api/plugins/${p.id}/config/test`)
        .send({ config: { title: '  ' } })
        .expect(200)
    ).body;
    expect(blank).toMatchObject({ ok: false, problems: ['title must not be blank'] });
    expect(
      (
        await t.http
          .post(`/api/plugins/${p.id}/config/test`)
          .send({ config: { title: 'Ops' } })
          .expect(200)
      ).body.ok,
    ).toBe(true);
    expect((await t.http.get(`/api/plugins/${p.id}/config`).expect(200)).body.config.title).toBe('Team pulse');
    await t.http
      .post(`/api/plugins/${p.id}/config`)
      .send({ config: { dailyTarget: -1 } })
      .expect(422);
    await t.http
      .post(`/api/plugins/${p.id}/config`)
      .send({ config: { title: 'Ops', dailyTarget: 5 } })
      .expect(200);
    const dash = (await t.http.get(`/api/plugins/${p.id}/dashboard`).expect(200)).body.dashboard;
    expect(dash).toMatchObject({ title: 'Ops', target: 5 });

    // events: an activity of a company reaches the worker from the outbox
    const scheduler = t.app.get(PluginsScheduler);
    const c = await createCompany(t);
    await t.http.post(`/api/companies/${c.id}/goals`).send({ title: 'first' }).expect(201);
    await scheduler.deliverEvents();
    const feed = async () =>
      (await t.http.post(`/api/plugins/${p.id}/data/events`).send({ companyId: c.id }).expect(200)).body.data as { action: string }[];
    expect((await feed()).map((e) => e.action)).toContain('goal.created');

    // someone watches the company's live stream (its events are stored only then)
    await t.app.get(LiveEventHub).position(c.id);
    // crash: the supervisor restarts it within 2 s
    const before = (await t.http.get(`/api/plugins/${p.id}/health`).expect(200)).body.worker;
    process.kill(before.pid, 'SIGKILL');
    const after = await waitFor(async () => {
      const h = (await t.http.get(`/api/plugins/${p.id}`).expect(200)).body.worker;
      return h.state === 'running' && h.pid && h.pid !== before.pid ? h : null;
    });
    expect(after.restarts).toBe(1);
    // the crash and the restart are on the company's live stream
    const live = await waitFor(async () => {
      await t.app.get(LiveEventBus).flush();
      const rows = await t.dataSource.query(
        `SELECT type, payload FROM live_events WHERE company_id = $1 AND type LIKE 'plugin.worker.%' ORDER BY id`,
        [c.id],
      );
      return rows.length >= 2 && rows;
    });
    expect(live.map((e: { type: string }) => e.type)).toEqual(['plugin.worker.crashed', 'plugin.worker.restarted']);
    expect(live[0].payload).toMatchObject({ pluginId: p.id, pluginKey: 'team-pulse' });
    const logs = (await t.http.get(`/api/plugins/${p.id}/logs`).expect(200)).body.lines
      .map((l: { message: string }) => l.message)
      .join('\n');
    expect(logs).toMatch(/crashed/);

    // events written while it was down (or before) are delivered after the restart, in order
    process.kill(after.pid, 'SIGKILL');
    await t.http.post(`/api/companies/${c.id}/goals`).send({ title: 'second' }).expect(201);
    await t.http.post(`/api/companies/${c.id}/goals`).send({ title: 'third' }).expect(201);
    await waitFor(async () => (await t.http.get(`/api/plugins/${p.id}`).expect(200)).body.worker.state === 'running', 5000);
    await scheduler.deliverEvents();
    const got = (await feed()).filter((e) => e.action === 'goal.created');
    expect(got.length).toBe(2); // the new worker's memory: the two goals created since the crash, once each

    // local folders: inside the allowed roots only
    const dir = path.join(tmp, 'reports');
    fs.mkdirSync(dir);
    fs.writeFileSync(path.join(dir, 'a.md'), 'x');
    const base = `/api/plugins/${p.id}/companies/${c.id}/local-folders`;
    expect((await t.http.get(base).expect(200)).body).toEqual([expect.objectContaining({ folderKey: 'reports', configured: false })]);
    expect((await t.http.post(`${base}/reports/validate`).send({ path: '/etc' }).expect(200)).body.valid).toBe(false);
    expect((await t.http.post(`${base}/reports/validate`).send({ path: dir }).expect(200)).body).toMatchObject({
      valid: true,
      listing: { files: 1 },
    });
    await t.http.put(`${base}/reports`).send({ path: '/etc' }).expect(422);
    await t.http.put(`${base}/reports`).send({ path: dir }).expect(200);
    expect((await t.http.get(`${base}/reports/status`).expect(200)).body).toMatchObject({
      configured: true,
      problems: [],
      listing: { files: 1 },
    });
    await t.http.get(`${base}/nope/status`).expect(404);

    await t.http.post(`/api/plugins/${p.id}/disable`).expect(200);
    expect((await t.http.get('/api/plugins/ui-contributions').expect(200)).body).toEqual([]);
    await t.http.delete(`/api/plugins/${p.id}`).expect(200);
  });

  it('the host API refuses what the capabilities of the manifest do not grant', async () => {
    const dir = probePlugin(
      'no-caps',
      ['config.read'],
      `
      const { serve } = require('./runtime');
      const attempt = (host, m, p) => host.call(m, p).then(() => 'ok', (e) => e.code);
      serve({ 'tools.execute': async (_, host) => ({
        config: await attempt(host, 'config.get'),
        fetch: await attempt(host, 'http.fetch', { url: 'http://127.0.0.1:1/' }),
        publish: await attempt(host, 'stream.publish', { channel: 'x' }),
        unknown: await attempt(host, 'db.query', {}),
      }) });`,
    );
    const p = await install(dir);
    await t.http.post(`/api/plugins/${p.id}/enable`).expect(200);
    const out = (await t.http.post('/api/plugins/tools/execute').send({ tool: 'no-caps:probe', input: {} }).expect(200)).body.output;
    expect(out).toEqual({ config: 'ok', fetch: -32001, publish: -32001, unknown: -32601 });
    await t.http.delete(`/api/plugins/${p.id}`).expect(200);
  });

  it('http.fetch goes through the outbound guard: no link-local (cloud metadata) or private destination, not via a redirect either; loopback in local_trusted', async () => {
    // a loopback server (allowed in local_trusted mode) that answers, or redirects to the metadata address
    const server = http.createServer((req, res) => {
      if (req.url === '/hop') res.writeHead(302, { location: 'http://169.254.169.254/latest/meta-data/' }).end();
      else res.writeHead(200).end('pong');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const local = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
    try {
      const dir = probePlugin(
        'fetcher',
        ['http.outbound'],
        `
        const { serve } = require('./runtime');
        const attempt = (host, url) => host.call('http.fetch', { url }).then((r) => r.status + ' ' + r.body, (e) => 'refused ' + e.code + ': ' + e.message);
        serve({ 'tools.execute': async ({ input }, host) => {
          const out = {};
          for (const [k, url] of Object.entries(input.urls)) out[k] = await attempt(host, url);
          return out;
        } });`,
      );
      const p = await install(dir);
      await t.http.post(`/api/plugins/${p.id}/enable`).expect(200);
      const urls = {
        metadata: 'http://169.254.169.254/latest/meta-data/',
        privateNet: 'http://10.20.30.40:8080/',
        redirected: `${local}/hop`,
        loopback: `${local}/ping`,
      };
      const out = (await t.http.post('/api/plugins/tools/execute').send({ tool: 'fetcher:probe', input: { urls } }).expect(200)).body
        .output;
      expect(out.metadata).toMatch(/^refused -32002: .*link-local/);
      expect(out.privateNet).toMatch(/^refused -32002: .*private network/);
      expect(out.redirected).toMatch(/^refused -32002: A redirect leads to .*link-local/);
      expect(out.loopback).toBe('200 pong');
      // each refusal is a line of the plugin's log (not a line on the service's console)
      const logs = (await t.http.get(`/api/plugins/${p.id}/logs`).expect(200)).body.lines as Array<{ level: string; message: string }>;
      expect(logs.filter((l) => l.level === 'warn' && /"http\.fetch".*refused/.test(l.message))).toHaveLength(3);
      await t.http.delete(`/api/plugins/${p.id}`).expect(200);

      // authenticated mode: loopback is refused too
      const authed = await createTestApp({ env: { ...AUTHENTICATED, SERVICE_PLUGINS_FOLDER_ROOTS: tmp } });
      try {
        const admin = auth((await instanceAdmin(authed)).token);
        const q = (await authed.http.post('/api/plugins/install').set(admin).send({ localPath: dir }).expect(201)).body;
        await authed.http.post(`/api/plugins/${q.id}/enable`).set(admin).expect(200);
        const res = await authed.http
          .post('/api/plugins/tools/execute')
          .set(admin)
          .send({ tool: 'fetcher:probe', input: { urls: { loopback: `${local}/ping` } } })
          .expect(200);
        expect(res.body.output.loopback).toMatch(/^refused -32002: .*loopback/);
        await authed.http.delete(`/api/plugins/${q.id}`).set(admin).expect(200);
      } finally {
        await authed.close();
      }
    } finally {
      await new Promise((r) => server.close(r));
    }
  });

  it('daily-digest: secret config stored as a reference; the cron job fires once per occurrence across two instances; manual trigger and runs', async () => {
    const rec = await recorder();
    const second = await createTestApp({ databaseUrl: t.databaseUrl });
    try {
      // the example with a schedule of every second
      const copy = path.join(tmp, 'digest');
      fs.cpSync(examples['daily-digest'].localPath, copy, { recursive: true });
      const manifest = JSON.parse(fs.readFileSync(path.join(copy, 'plugin.json'), 'utf8'));
      manifest.jobs[0].schedule = '* * * * * *';
      fs.writeFileSync(path.join(copy, 'plugin.json'), JSON.stringify(manifest));
      const p = await install(copy);

      const c = await createCompany(t);
      await t.http
        .post(`/api/plugins/${p.id}/config`)
        .send({ config: { webhookUrl: rec.url, authToken: 's3cret' } })
        .expect(422); // needs a company for the secret
      const saved = (
        await t.http
          .post(`/api/plugins/${p.id}/config`)
          .send({ config: { webhookUrl: rec.url, authToken: 's3cret' }, secretsCompanyId: c.id })
          .expect(200)
      ).body;
      expect(saved.config.authToken).toMatchObject({ type: 'secret_ref', companyId: c.id, secretId: expect.any(String) });
      expect(JSON.stringify((await t.http.get(`/api/plugins/${p.id}/config`).expect(200)).body)).not.toContain('s3cret');
      expect(
        (
          await t.http
            .post(`/api/plugins/${p.id}/config/test`)
            .send({ config: { webhookUrl: 'ftp://x' } })
            .expect(200)
        ).body.ok,
      ).toBe(false);

      await t.http.post(`/api/plugins/${p.id}/jobs/post-digest/trigger`).expect(409); // disabled
      await t.http.post(`/api/plugins/${p.id}/enable`).expect(200);
      const manual = (await t.http.post(`/api/plugins/${p.id}/jobs/post-digest/trigger`).expect(200)).body;
      expect(manual).toMatchObject({ trigger: 'manual', status: 'succeeded', durationMs: expect.any(Number) });
      expect(rec.headers[0].authorization).toBe('Bearer s3cret');

      // both instances tick at the same occurrence: one run, one POST
      await sleep(1100);
      const now = new Date();
      const results = await Promise.all([t.app.get(PluginsScheduler).tick(now), second.app.get(PluginsScheduler).tick(now)]);
      expect(results[0].jobsRun + results[1].jobsRun).toBe(1);
      const again = await Promise.all([t.app.get(PluginsScheduler).tick(now), second.app.get(PluginsScheduler).tick(now)]);
      expect(again[0].jobsRun + again[1].jobsRun).toBe(0);
      const runs = (await t.http.get(`/api/plugins/${p.id}/jobs/post-digest/runs`).expect(200)).body;
      expect(runs.filter((r: { trigger: string }) => r.trigger === 'schedule')).toEqual([expect.objectContaining({ status: 'succeeded' })]);
      expect(rec.bodies.length).toBe(2);
      const jobs = (await t.http.get(`/api/plugins/${p.id}/jobs`).expect(200)).body;
      expect(jobs[0]).toMatchObject({ key: 'post-digest', lastRun: expect.objectContaining({ status: 'succeeded' }) });
      await t.http.get(`/api/plugins/${p.id}/jobs/nope/runs`).expect(404);

      await t.http.delete(`/api/plugins/${p.id}`).expect(200);
      await second.app.get(PluginsScheduler).tick(); // the other instance stops its worker of an uninstalled plugin
    } finally {
      await second.close();
      await rec.close();
    }
  });
});
