import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as os from 'node:os';
import * as path from 'node:path';
import * as tar from 'tar';
import { createAgentWithKey } from '../support/agents';
import { createCompany } from '../support/factories';
import { sleep, waitFor } from '../support/heartbeat';
import { ServiceProcess, startService } from '../support/service-process';
import { createTestApp, createTestDatabase, TestApp } from '../support/test-app';
import { auth, AUTHENTICATED, signUp } from '../support/users';

jest.setTimeout(180_000);

const EXAMPLE = path.join(__dirname, '..', '..', 'examples', 'adapters', 'echo-adapter');
const TYPE = 'echo_external';

/** A writable copy of the example adapter; `edit` rewrites files of the copy. */
function copyExample(opts: { type?: string; version?: string; codeVersion?: string; uiParser?: boolean } = {}): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'echo-adapter-'));
  fs.cpSync(EXAMPLE, dir, { recursive: true });
  editExample(dir, opts);
  return dir;
}

function editExample(dir: string, opts: { type?: string; version?: string; codeVersion?: string; uiParser?: boolean }): void {
  const pkgFile = path.join(dir, 'package.json');
  const pkg = JSON.parse(fs.readFileSync(pkgFile, 'utf8'));
  if (opts.version) pkg.version = opts.version;
  if (opts.type) pkg.name = `@service-examples/${opts.type.replace(/_/g, '-')}`;
  if (opts.uiParser === false) delete pkg.serviceAdapter.uiParser;
  fs.writeFileSync(pkgFile, JSON.stringify(pkg, null, 2));
  let code = fs.readFileSync(path.join(dir, 'index.js'), 'utf8');
  if (opts.type) code = code.replace(`type: '${TYPE}'`, `type: '${opts.type}'`);
  if (opts.codeVersion) code = code.replace(/const CODE_VERSION = '[^']*'/, `const CODE_VERSION = '${opts.codeVersion}'`);
  fs.writeFileSync(path.join(dir, 'index.js'), code);
}

/** An npm-pack style tarball (`package/…`) of a folder. */
async function packTarball(dir: string): Promise<string> {
  const staging = fs.mkdtempSync(path.join(os.tmpdir(), 'echo-pack-'));
  fs.cpSync(dir, path.join(staging, 'package'), { recursive: true });
  const file = path.join(staging, 'adapter.tgz');
  await tar.c({ gzip: true, file, cwd: staging }, ['package']);
  return file;
}

async function runOf(t: TestApp, agentId: string): Promise<Record<string, any>> {
  const res = await t.http
    .post(`/api/agents/${agentId}/wakeup`)
    .send({ source: 'on_demand', triggerDetail: 'manual', reason: 'test' })
    .expect(202);
  expect(res.body.id).toBeDefined();
  return waitFor(async () => {
    const [r] = await t.dataSource.query(`SELECT * FROM heartbeat_runs WHERE id = $1`, [res.body.id]);
    return r && ['succeeded', 'failed', 'cancelled', 'timed_out'].includes(r.status) ? r : null;
  }, 'the run to end');
}

describe('external adapters (one instance)', () => {
  let t: TestApp;
  let registry: http.Server;
  let folder: string;
  beforeAll(async () => {
    // a one-package npm registry on 127.0.0.1 serving a variant of the example (type echo_npm)
    const npmDir = copyExample({ type: 'echo_npm', version: '3.1.0' });
    const tgz = fs.readFileSync(await packTarball(npmDir));
    registry = http.createServer((req, res) => {
      const base = `http://127.0.0.1:${(registry.address() as { port: number }).port}`;
      if (req.url === '/@service-examples%2fecho-npm') {
        res.setHeader('content-type', 'application/json');
        const integrity = `sha512-${createHash('sha512').update(tgz).digest('base64')}`;
        res.end(
          JSON.stringify({
            'dist-tags': { latest: '3.1.0' },
            versions: { '3.1.0': { dist: { tarball: `${base}/echo-npm-3.1.0.tgz`, integrity } } },
          }),
        );
      } else if (req.url === '/echo-npm-3.1.0.tgz') res.end(tgz);
      else res.writeHead(404).end('{}');
    });
    await new Promise<void>((r) => registry.listen(0, '127.0.0.1', r));
    t = await createTestApp({
      listen: true,
      env: { SERVICE_PLUGINS_NPM_REGISTRY: `http://127.0.0.1:${(registry.address() as { port: number }).port}` },
    });
    folder = copyExample();
  });
  afterAll(async () => {
    await t.close();
    registry.close();
  });

  it('installs from a local folder (201), lists it, refuses a second install (409)', async () => {
    const res = await t.http.post('/api/adapters/install').send({ localPath: folder }).expect(201);
    expect(res.body).toMatchObject({
      type: TYPE,
      builtIn: false,
      executable: true,
      label: 'Echo (example external adapter)',
      package: {
        name: '@service-examples/echo-adapter',
        version: '1.0.0',
        sourceKind: 'local',
        sourceRef: folder,
        hasUiParser: true,
        installGeneration: 1,
        loadGeneration: 1,
      },
      loaded: { version: '1.0.0', loadGeneration: 1 },
      override: { disabled: false, reason: null, pinnedVersion: null },
      instanceConfig: {},
    });
    expect(res.body.configSchema.properties).toHaveProperty('message');
    const list = (await t.http.get('/api/adapters').expect(200)).body;
    expect(list.find((a: { type: string }) => a.type === TYPE)).toMatchObject({ builtIn: false });
    expect((await t.http.post('/api/adapters/install').send({ localPath: folder }).expect(409)).body.code).toBe('adapter_exists');
    expect((await t.http.get(`/api/adapters/${TYPE}/config-schema`).expect(200)).body.properties).toHaveProperty('greeting');
  });

  it('installs from a tarball and from the npm registry', async () => {
    const tarball = await packTarball(copyExample({ type: 'echo_tarball', uiParser: false }));
    const a = await t.http.post('/api/adapters/install').send({ localPath: tarball }).expect(201);
    expect(a.body).toMatchObject({
      type: 'echo_tarball',
      package: { sourceKind: 'tarball', hasUiParser: false },
      loaded: { version: '1.0.0' },
    });
    const b = await t.http.post('/api/adapters/install').send({ packageName: '@service-examples/echo-npm' }).expect(201);
    expect(b.body).toMatchObject({
      type: 'echo_npm',
      package: { sourceKind: 'npm', sourceRef: '@service-examples/echo-npm@3.1.0', version: '3.1.0' },
    });
    expect((await t.http.post('/api/adapters/install').send({ packageName: '@service-examples/missing' }).expect(422)).body.code).toBe(
      'adapter_source_invalid',
    );
  });

  it('refuses bad sources and bodies: 422 for no package or no adapter, 409 for a built-in type, 400 for bad fields', async () => {
    expect((await t.http.post('/api/adapters/install').send({}).expect(422)).body.code).toBe('adapter_source_invalid');
    expect((await t.http.post('/api/adapters/install').send({ localPath: '/nonexistent/adapter' }).expect(422)).body.code).toBe(
      'adapter_source_invalid',
    );
    const notAdapter = fs.mkdtempSync(path.join(os.tmpdir(), 'not-adapter-'));
    fs.writeFileSync(path.join(notAdapter, 'package.json'), JSON.stringify({ name: 'x', version: '1.0.0' }));
    expect((await t.http.post('/api/adapters/install').send({ localPath: notAdapter }).expect(422)).body.code).toBe(
      'adapter_package_invalid',
    );
    const builtin = copyExample({ type: 'process' });
    expect((await t.http.post('/api/adapters/install').send({ localPath: builtin }).expect(409)).body.code).toBe('adapter_builtin');
    await t.http.post('/api/adapters/install').send({ localPath: 5 }).expect(400);
    await t.http.post('/api/adapters/install').send({ packageName: '' }).expect(400);
    await t.http.patch(`/api/adapters/${TYPE}`).send({ config: 'x' }).expect(400);
    await t.http.patch(`/api/adapters/${TYPE}/override`).send({ disabled: 'yes' }).expect(400);
    await t.http.patch(`/api/adapters/${TYPE}/override`).send({ pinnedVersion: '1.0.0; rm -rf' }).expect(400);
  });

  it('serves the UI parser script as JavaScript; 404 when the type has none', async () => {
    const res = await t.http.get(`/api/adapters/${TYPE}/ui-parser.js`).expect(200);
    expect(res.headers['content-type']).toMatch(/^application\/javascript/);
    expect(res.text).toContain('export function parseLine');
    await t.http.get('/api/adapters/echo_tarball/ui-parser.js').expect(404);
    await t.http.get('/api/adapters/process/ui-parser.js').expect(404);
    await t.http.get('/api/adapters/nope/ui-parser.js').expect(404);
  });

  it("runs agents of the type with the instance configuration merged under the agent's", async () => {
    const c = await createCompany(t);
    const agent = (
      await t.http
        .post(`/api/companies/${c.id}/agents`)
        .send({ name: 'Echoer', role: 'general', adapterType: TYPE, adapterConfig: { message: 'world' } })
        .expect(201)
    ).body;
    const first = await runOf(t, agent.id);
    expect(first).toMatchObject({ status: 'succeeded', adapter_type: TYPE });
    expect(first.result_json).toMatchObject({ echoed: 'hello world', codeVersion: 'v1' });
    const patched = await t.http
      .patch(`/api/adapters/${TYPE}`)
      .send({ config: { greeting: 'bonjour', message: 'default' } })
      .expect(200);
    expect(patched.body.instanceConfig).toEqual({ greeting: 'bonjour', message: 'default' });
    const second = await runOf(t, agent.id);
    expect(second.result_json).toMatchObject({ echoed: 'bonjour world' }); // the agent's message wins over the instance's
    const log = await t.http.get(`/api/heartbeat-runs/${second.id}/log`).expect(200);
    expect(JSON.stringify(log.body)).toContain('echo v1: bonjour world');
    expect(
      (
        await t.http
          .patch(`/api/adapters/${TYPE}`)
          .send({ config: { delayMs: 'soon' } })
          .expect(422)
      ).body,
    ).toMatchObject({ code: 'adapter_config_invalid', field: 'config.delayMs' });
    await t.http.patch('/api/adapters/nope').send({ config: {} }).expect(404);
    await t.http.patch(`/api/adapters/${TYPE}`).send({ config: {} }).expect(200);
  });

  it("force-disable skips the wakes of the type's agents with a clear reason; lifting it runs them again", async () => {
    const c = await createCompany(t);
    const agent = (
      await t.http
        .post(`/api/companies/${c.id}/agents`)
        .send({ name: 'Echoer', role: 'general', adapterType: TYPE, adapterConfig: {} })
        .expect(201)
    ).body;
    const off = await t.http.patch(`/api/adapters/${TYPE}/override`).send({ disabled: true, reason: 'vendor outage' }).expect(200);
    expect(off.body.override).toEqual({ disabled: true, reason: 'vendor outage', pinnedVersion: null });
    const wake = await t.http.post(`/api/agents/${agent.id}/wakeup`).send({ source: 'on_demand', triggerDetail: 'manual' }).expect(202);
    expect(wake.body).toMatchObject({ skipped: true, reason: 'adapter_disabled' });
    // built-in types can be force-disabled too
    const p = await createAgentWithKey(t, c.id);
    await t.http.patch('/api/adapters/process/override').send({ disabled: true }).expect(200);
    expect((await t.http.post(`/api/agents/${p.agent.id}/wakeup`).send({ source: 'on_demand' }).expect(202)).body).toMatchObject({
      skipped: true,
      reason: 'adapter_disabled',
    });
    await t.http.patch('/api/adapters/process/override').send({ disabled: false }).expect(200);
    const on = await t.http.patch(`/api/adapters/${TYPE}/override`).send({ disabled: false }).expect(200);
    expect(on.body.override).toEqual({ disabled: false, reason: null, pinnedVersion: null });
    expect((await runOf(t, agent.id)).status).toBe('succeeded');
  });

  it('pins a version: another version is refused on reinstall until unpinned; built-in types cannot be pinned', async () => {
    expect((await t.http.patch('/api/adapters/process/override').send({ pinnedVersion: '1.0.0' }).expect(409)).body.code).toBe(
      'adapter_not_external',
    );
    expect((await t.http.patch(`/api/adapters/${TYPE}/override`).send({ pinnedVersion: '9.9.9' }).expect(409)).body.code).toBe(
      'adapter_version_pinned',
    );
    await t.http.patch(`/api/adapters/${TYPE}/override`).send({ pinnedVersion: '1.0.0' }).expect(200);
    editExample(folder, { version: '2.0.0', codeVersion: 'v2' });
    expect((await t.http.post(`/api/adapters/${TYPE}/reinstall`).expect(409)).body).toMatchObject({
      code: 'adapter_version_pinned',
      pinnedVersion: '1.0.0',
    });
    await t.http.patch(`/api/adapters/${TYPE}/override`).send({ pinnedVersion: null }).expect(200);
    const re = await t.http.post(`/api/adapters/${TYPE}/reinstall`).expect(200);
    expect(re.body).toMatchObject({
      package: { version: '2.0.0', installGeneration: 2, loadGeneration: 2 },
      loaded: { version: '2.0.0', loadGeneration: 2 },
    });
    expect((await t.http.post('/api/adapters/process/reinstall').expect(409)).body.code).toBe('adapter_not_external');
    expect((await t.http.post('/api/adapters/nope/reload').expect(404)).body.code).toBe('adapter_not_found');
  });

  it('deletes external types only; the type disappears', async () => {
    const res = await t.http.delete('/api/adapters/echo_tarball').expect(200);
    expect(res.body.type).toBe('echo_tarball');
    expect((await t.http.get('/api/adapters').expect(200)).body.some((a: { type: string }) => a.type === 'echo_tarball')).toBe(false);
    await t.http.get('/api/adapters/echo_tarball/config-schema').expect(404);
    expect((await t.http.delete('/api/adapters/http').expect(409)).body.code).toBe('adapter_builtin');
    await t.http.delete('/api/adapters/echo_tarball').expect(404);
  });

  it('refuses agent tokens on every adapter route (403)', async () => {
    const c = await createCompany(t);
    const { token } = await createAgentWithKey(t, c.id);
    const h = { Authorization: `Bearer ${token}` };
    await t.http.get('/api/adapters').set(h).expect(403);
    await t.http.post('/api/adapters/install').set(h).send({ localPath: folder }).expect(403);
    await t.http.post(`/api/adapters/${TYPE}/reload`).set(h).expect(403);
    await t.http.post(`/api/adapters/${TYPE}/reinstall`).set(h).expect(403);
    await t.http.patch(`/api/adapters/${TYPE}`).set(h).send({ config: {} }).expect(403);
    await t.http.patch(`/api/adapters/${TYPE}/override`).set(h).send({ disabled: true }).expect(403);
    await t.http.delete(`/api/adapters/${TYPE}`).set(h).expect(403);
    await t.http.get(`/api/adapters/${TYPE}/ui-parser.js`).set(h).expect(403);
    await t.http.get(`/api/adapters/${TYPE}/config-schema`).set(h).expect(403);
  });
});

describe('external adapters: instance admin only (authenticated mode)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ env: AUTHENTICATED });
  });
  afterAll(() => t.close());

  it('401 without credentials, 403 for a user who is not an instance admin', async () => {
    await t.http.post('/api/adapters/install').send({ localPath: EXAMPLE }).expect(401);
    const user = await signUp(t);
    await t.http.post('/api/adapters/install').set(auth(user.token)).send({ localPath: EXAMPLE }).expect(403);
    await t.http.patch('/api/adapters/process/override').set(auth(user.token)).send({ disabled: true }).expect(403);
    await t.http.patch('/api/adapters/process').set(auth(user.token)).send({ config: {} }).expect(403);
  });
});

describe('external adapters across two service instances on one database', () => {
  let a: ServiceProcess;
  let b: ServiceProcess;
  let folder: string;
  const dirs: string[] = [];
  beforeAll(async () => {
    const databaseUrl = await createTestDatabase();
    folder = copyExample();
    const env = () => {
      const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-adapters-'));
      dirs.push(dataDir);
      return { DATABASE_URL: databaseUrl, SERVICE_DATA_DIR: dataDir, SERVICE_ADAPTERS_SYNC_MS: '200', SERVICE_HEARTBEAT_TICK_MS: '200' };
    };
    [a, b] = await Promise.all([startService(env()), startService(env())]);
  });
  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
    for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
  });

  const entry = async (s: ServiceProcess) => (await s.api('GET', '/api/adapters')).body.find((x: { type: string }) => x.type === TYPE);
  const endedRun = async (s: ServiceProcess, runId: string) =>
    waitFor(
      async () => {
        const r = await s.api('GET', `/api/heartbeat-runs/${runId}`);
        return ['succeeded', 'failed', 'cancelled', 'timed_out'].includes(r.body?.status) ? r.body : null;
      },
      `run ${runId} to end`,
      30_000,
    );

  it('an install on one instance is loaded by the other; reinstall brings new code to both; override and delete reach both', async () => {
    const installed = await a.api('POST', '/api/adapters/install', { localPath: folder });
    expect(installed.status).toBe(201);
    await waitFor(async () => (await entry(b))?.loaded?.loadGeneration === 1, 'instance B to load the adapter');
    expect(await entry(b)).toMatchObject({ executable: true, package: { version: '1.0.0' } });

    // B validates agents of the new type and runs them
    const company = (await b.api('POST', '/api/companies', { name: 'Two instances' })).body;
    const agent = await b.api('POST', `/api/companies/${company.id}/agents`, {
      name: 'Echo',
      role: 'general',
      adapterType: TYPE,
      adapterConfig: { message: 'twice' },
    });
    expect(agent.status).toBe(201);
    const wake1 = await b.api('POST', `/api/agents/${agent.body.id}/wakeup`, { source: 'on_demand' });
    expect(wake1.status).toBe(202);
    expect((await endedRun(b, wake1.body.id)).resultJson).toMatchObject({ codeVersion: 'v1' });

    // new code in the folder, reinstall on A (a local folder is copied, never loaded in place): B
    // copies it again, and new runs (on either instance) use it
    editExample(folder, { codeVersion: 'v2' });
    expect((await a.api('POST', `/api/adapters/${TYPE}/reinstall`)).status).toBe(200);
    await waitFor(async () => (await entry(b))?.loaded?.loadGeneration === 2, 'instance B to re-import');
    for (const s of [a, b]) {
      const w = await s.api('POST', `/api/agents/${agent.body.id}/wakeup`, { source: 'on_demand' });
      expect(w.status).toBe(202);
      const run = await endedRun(s, w.body.id);
      expect(run.resultJson).toMatchObject({ codeVersion: 'v2' });
    }

    // force-disable on A: wakes on B are skipped at once (read from the database)
    expect((await a.api('PATCH', `/api/adapters/${TYPE}/override`, { disabled: true, reason: 'maintenance' })).status).toBe(200);
    const skipped = await b.api('POST', `/api/agents/${agent.body.id}/wakeup`, { source: 'on_demand' });
    expect(skipped.body).toMatchObject({ skipped: true, reason: 'adapter_disabled' });
    expect((await entry(b)).override).toMatchObject({ disabled: true, reason: 'maintenance' });

    // delete on A: B drops the type
    expect((await a.api('DELETE', `/api/adapters/${TYPE}`)).status).toBe(200);
    await waitFor(async () => !(await entry(b)), 'instance B to drop the adapter');
    expect((await b.api('GET', `/api/adapters/${TYPE}/config-schema`)).status).toBe(404);
    await sleep(10);
  });
});
