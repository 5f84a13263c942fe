import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as os from 'node:os';
import * as path from 'node:path';
import * as tar from 'tar';
import { PluginsScheduler } from '../../src/modules/plugins/plugins.jobs';
import { createCompany } from '../support/factories';
import { waitFor } from '../support/heartbeat';
import { createTestApp, TestApp } from '../support/test-app';

const EXAMPLES = path.join(__dirname, '..', '..', 'examples', 'plugins');

/** `npm pack` layout (`package/…`) of a copy of an example, edited by `change`; returns the tarball's bytes. */
async function packExample(
  tmp: string,
  example: string,
  version: string,
  change: (dir: string) => void = () => undefined,
): Promise<Buffer> {
  const root = fs.mkdtempSync(path.join(tmp, 'pack-'));
  const dir = path.join(root, 'package');
  fs.cpSync(path.join(EXAMPLES, example), dir, { recursive: true });
  for (const file of ['package.json', 'plugin.json']) {
    const json = JSON.parse(fs.readFileSync(path.join(dir, file), 'utf8'));
    json.version = version;
    fs.writeFileSync(path.join(dir, file), JSON.stringify(json));
  }
  change(dir);
  const file = path.join(root, 'pkg.tgz');
  await tar.c({ gzip: true, file, cwd: root }, ['package']);
  return fs.readFileSync(file);
}

/** A local npm registry: packuments at /<name>, tarballs at /-/<name>-<version>.tgz (real HTTP). */
async function registry(packages: Record<string, Record<string, { tgz: Buffer; integrity?: string }>>) {
  const server = http.createServer((req, res) => {
    const url = decodeURIComponent(req.url ?? '');
    const tgz = /^\/-\/(.+)-(\d+\.\d+\.\d+)\.tgz$/.exec(url);
    if (tgz) {
      const v = packages[tgz[1]]?.[tgz[2]];
      if (!v) return res.writeHead(404).end();
      return res.writeHead(200, { 'content-type': 'application/octet-stream' }).end(v.tgz);
    }
    const name = url.slice(1);
    const versions = packages[name];
    if (!versions) return res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"Not found"}');
    const base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
    const doc = {
      name,
      'dist-tags': { latest: Object.keys(versions).sort().at(-1) },
      versions: Object.fromEntries(
        Object.entries(versions).map(([v, p]) => [
          v,
          {
            name,
            version: v,
            dist: {
              tarball: `${base}/-/${name}-${v}.tgz`,
              integrity: p.integrity ?? `sha512-${createHash('sha512').update(p.tgz).digest('base64')}`,
            },
          },
        ]),
      ),
    };
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(doc));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}`,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

describe('plugins: npm installs and upgrades, bridge routes, local folders read through the host', () => {
  let t: TestApp;
  let reg: Awaited<ReturnType<typeof registry>>;
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'plugins-pkg-'));
  // local folders are read with the rights of the company's agents (any user here)
  fs.chmodSync(tmp, 0o755);

  beforeAll(async () => {
    const v1 = await packExample(tmp, 'word-tools', '1.0.0');
    const v2 = await packExample(tmp, 'word-tools', '1.1.0', (dir) => {
      const worker = path.join(dir, 'worker.js');
      fs.writeFileSync(worker, fs.readFileSync(worker, 'utf8').replace('return { words,', "return { version: '1.1.0', words,"));
    });
    const tampered = await packExample(tmp, 'word-tools', '2.0.0');
    reg = await registry({
      '@service-plugins/word-tools': { '1.0.0': { tgz: v1 }, '1.1.0': { tgz: v2 } },
      '@service-plugins/tampered': {
        '2.0.0': { tgz: tampered, integrity: `sha512-${createHash('sha512').update('something else').digest('base64')}` },
      },
    });
    t = await createTestApp({ env: { SERVICE_PLUGINS_NPM_REGISTRY: reg.url, SERVICE_PLUGINS_FOLDER_ROOTS: tmp } });
  }, 120_000);
  afterAll(async () => {
    await t?.close();
    await reg?.close();
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  it('installs a version from the registry, upgrades to the latest, and the worker runs the new code', async () => {
    const installed = (
      await t.http.post('/api/plugins/install').send({ packageName: '@service-plugins/word-tools', version: '1.0.0' }).expect(201)
    ).body;
    expect(installed).toMatchObject({
      pluginKey: 'word-tools',
      version: '1.0.0',
      source: { kind: 'npm', ref: '@service-plugins/word-tools@1.0.0' },
    });
    await t.http.post(`/api/plugins/${installed.id}/enable`).expect(200);
    const before = (
      await t.http
        .post('/api/plugins/tools/execute')
        .send({ tool: 'word-count', input: { text: 'one two' } })
        .expect(200)
    ).body;
    expect(before.output).toEqual({ words: 2, characters: 7, companyId: null });

    const upgraded = (await t.http.post(`/api/plugins/${installed.id}/upgrade`).send({}).expect(200)).body;
    expect(upgraded).toMatchObject({ id: installed.id, version: '1.1.0', source: { kind: 'npm' }, status: 'enabled' });
    const after = (
      await t.http
        .post('/api/plugins/tools/execute')
        .send({ tool: 'word-count', input: { text: 'one two' } })
        .expect(200)
    ).body;
    expect(after.output).toMatchObject({ version: '1.1.0', words: 2 });
    await t.http.delete(`/api/plugins/${installed.id}`).expect(200);
  });

  it('refuses a tarball that does not match the registry digest, unknown packages and versions', async () => {
    const tampered = await t.http.post('/api/plugins/install').send({ packageName: '@service-plugins/tampered' }).expect(422);
    expect(tampered.body).toMatchObject({ code: 'plugin_source_invalid' });
    expect(tampered.body.error).toMatch(/digest/);
    expect((await t.http.get('/api/plugins').expect(200)).body).toEqual([]);
    await t.http.post('/api/plugins/install').send({ packageName: '@service-plugins/nothing' }).expect(422);
    await t.http.post('/api/plugins/install').send({ packageName: '@service-plugins/word-tools', version: '9.9.9' }).expect(422);
    await t.http
      .post('/api/plugins/install')
      .send({ packageName: 'not a name!' })
      .expect((r) => expect([400, 422]).toContain(r.status));
  });

  it('bridge data, action and stream; folders.list/read through the host stay inside the configured folder', async () => {
    const examples = (await t.http.get('/api/plugins/examples').expect(200)).body as Array<{ pluginKey: string; localPath: string }>;
    const pulse = examples.find((e) => e.pluginKey === 'team-pulse')!;
    const p = (await t.http.post('/api/plugins/install').send({ localPath: pulse.localPath }).expect(201)).body;
    await t.http.post(`/api/plugins/${p.id}/enable`).expect(200);
    const c = await createCompany(t);

    // the stream: what the worker publishes on channel pulse arrives as SSE
    const addr = await new Promise<{ port: number }>((resolve) => {
      const server = t.app.getHttpServer();
      if (server.listening) resolve(server.address() as { port: number });
      else server.listen(0, '127.0.0.1', () => resolve(server.address() as { port: number }));
    });
    let sse = '';
    const req = http.get(`http://127.0.0.1:${addr.port}/api/plugins/${p.id}/bridge/stream/pulse`, (res) => {
      expect(res.statusCode).toBe(200);
      expect(res.headers['content-type']).toMatch(/text\/event-stream/);
      res.on('data', (d) => (sse += d));
    });
    await waitFor(async () => sse.includes(': open pulse'), 'stream open');
    await t.http.post(`/api/companies/${c.id}/goals`).send({ title: 'streamed' }).expect(201);
    await t.app.get(PluginsScheduler).deliverEvents();
    await waitFor(async () => /data: .*goal\.created/.test(sse), 'stream message');
    req.destroy();

    const data = (await t.http.post(`/api/plugins/${p.id}/bridge/data`).send({ key: 'events', companyId: c.id }).expect(200)).body;
    expect(data.data.map((e: { action: string }) => e.action)).toContain('goal.created');
    await t.http.post(`/api/plugins/${p.id}/bridge/data`).send({ key: 'nope' }).expect(404);

    // folders: not configured yet, then configured; the worker reads through the host only inside it
    const read = (params: Record<string, unknown>) =>
      t.http.post(`/api/plugins/${p.id}/bridge/action`).send({ key: 'read-report', companyId: c.id, params });
    expect((await read({})).status).toBe(502);
    const dir = path.join(tmp, 'reports');
    fs.mkdirSync(dir);
    fs.writeFileSync(path.join(dir, 'weekly.md'), '# Week 47\nall green\n');
    fs.writeFileSync(path.join(tmp, 'outside.txt'), 'not for plugins');
    fs.symlinkSync(path.join(tmp, 'outside.txt'), path.join(dir, 'escape.txt'));
    await t.http.put(`/api/plugins/${p.id}/companies/${c.id}/local-folders/reports`).send({ path: dir }).expect(200);
    const ok = (await read({ file: 'weekly.md' }).expect(200)).body.result;
    expect(ok.files.sort()).toEqual(['escape.txt', 'weekly.md']);
    expect(ok.report).toMatchObject({ path: 'weekly.md', content: '# Week 47\nall green\n', truncated: false });
    for (const file of ['../outside.txt', 'escape.txt', '/etc/passwd']) {
      const refused = await read({ file });
      expect(refused.status).toBe(502);
      expect(JSON.stringify(refused.body)).not.toContain('not for plugins');
    }
    // another company has no folder configured
    const other = await createCompany(t);
    const elsewhere = await t.http
      .post(`/api/plugins/${p.id}/bridge/action`)
      .send({ key: 'read-report', companyId: other.id, params: { file: 'weekly.md' } });
    expect(elsewhere.status).toBe(502);
    expect(elsewhere.body.error).toMatch(/not configured/);
    await t.http.delete(`/api/plugins/${p.id}`).expect(200);
  });
});
