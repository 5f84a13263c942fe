import { execFileSync, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { createCompany } from '../support/factories';
import { waitFor } from '../support/heartbeat';
import { createTestApp, TestApp } from '../support/test-app';

jest.setTimeout(180_000);

/**
 * Sealed plugin and adapter code (issue 27, repros 2, 7 and the folder API of 8): installed code
 * lives outside every agent- or worker-writable path, owned by the service, hash-checked before it
 * runs; plugin workers run under a uid of their own; local sources are copied and refused when
 * writable by others; the folder host API serves only the company of the call. Run as root.
 */
const EXAMPLES = path.join(__dirname, '..', '..', 'examples');
const PULSE = path.join(EXAMPLES, 'plugins', 'team-pulse');
const ECHO = path.join(EXAMPLES, 'adapters', 'echo-adapter');
const asRoot = process.getuid?.() === 0;
const d = asRoot ? describe : describe.skip;

/** Runs `sh -c script` as uid/gid without supplementary groups; answers the exit status. */
function asUid(uid: number, gid: number, script: string): number | null {
  return spawnSync('setpriv', ['--reuid', String(uid), '--regid', String(gid), '--clear-groups', '--', 'sh', '-c', script], {
    stdio: 'ignore',
  }).status;
}

/** Runs `sh -c script` as uid/gid 12345 without groups (an agent-like stranger); answers the exit status. */
const asStranger = (script: string): number | null => asUid(12345, 12345, script);

/** The environment of a live process, `NAME=value` each (from /proc/<pid>/environ). */
const environOf = (pid: number): string[] => fs.readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').filter(Boolean);
const homeOf = (pid: number): string | undefined =>
  environOf(pid)
    .find((e) => e.startsWith('HOME='))
    ?.slice(5);

/** Real uid and gid of a live process (from /proc/<pid>/status). */
function idsOf(pid: number): { uid: number; gid: number } {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const field = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+)`, 'm').exec(status)?.[1]);
  return { uid: field('Uid'), gid: field('Gid') };
}

/** `id -u` / `id -g` of a user (null when there is none). */
const idOf = (flag: '-u' | '-g', user: string): number | null => {
  try {
    return Number(
      execFileSync('id', [flag, user], { stdio: ['ignore', 'pipe', 'ignore'] })
        .toString()
        .trim(),
    );
  } catch {
    return null;
  }
};
const uidOf = (user: string) => idOf('-u', user);
const gidOf = (user: string) => idOf('-g', user);

/** Every folder above `p` and `p` itself: owned by root, not writable by group or others (sticky folders aside). */
function ownershipProblems(p: string): string[] {
  const problems: string[] = [];
  const check = (x: string) => {
    const st = fs.lstatSync(x);
    if (st.isSymbolicLink()) return;
    const sticky = (st.mode & 0o1000) !== 0;
    if (st.uid !== 0) problems.push(`${x} owned by ${st.uid}`);
    if (st.mode & 0o022 && !sticky) problems.push(`${x} mode ${(st.mode & 0o7777).toString(8)}`);
  };
  for (let cur = path.dirname(p); ; cur = path.dirname(cur)) {
    check(cur);
    if (path.dirname(cur) === cur) break;
  }
  const walk = (x: string) => {
    check(x);
    if (fs.lstatSync(x).isDirectory()) for (const n of fs.readdirSync(x)) walk(path.join(x, n));
  };
  walk(p);
  return problems;
}

d('sealed plugin and adapter code (run as root)', () => {
  let t: TestApp;
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'sealed-code-'));
  fs.chmodSync(tmp, 0o755);

  beforeAll(async () => {
    t = await createTestApp({ listen: true, env: { SERVICE_PLUGINS_FOLDER_ROOTS: tmp } });
  });
  afterAll(async () => {
    await t?.close();
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  const installPathOf = async (id: string): Promise<string> =>
    (await t.dataSource.query(`SELECT install_path FROM plugins WHERE id = $1`, [id]))[0].install_path;

  /** A copy of an example under tmp (secure: root-owned, 0755/0644). */
  function copyOf(src: string, name: string): string {
    const dir = path.join(tmp, name);
    fs.cpSync(src, dir, { recursive: true });
    return dir;
  }

  it('plugin code is sealed: outside agent homes, owned by root, not writable (nor readable) by another uid', async () => {
    const p = (await t.http.post('/api/plugins/install').send({ localPath: PULSE }).expect(201)).body;
    const dir = await installPathOf(p.id);
    expect(dir.startsWith('/var/lib/service-agent')).toBe(false);
    expect(ownershipProblems(dir)).toEqual([]);
    const worker = path.join(dir, 'worker.js');
    expect(fs.statSync(worker).mode & 0o777).toBe(0o640);
    expect(asStranger(`echo x >> '${worker}'`)).not.toBe(0);
    expect(asStranger(`echo x > '${dir}/planted.js'`)).not.toBe(0);
    expect(asStranger(`mv '${dir}' '${dir}.moved'`)).not.toBe(0);
    expect(asStranger(`cat '${worker}'`)).not.toBe(0);
    expect(fs.existsSync(`${dir}.moved`)).toBe(false);
    expect(fs.readFileSync(worker, 'utf8')).not.toMatch(/\nx\n$/);
    await t.http.delete(`/api/plugins/${p.id}`).expect(200);
  });

  /** A worker's uid: its own (from the agent uid range), never root, the agent user's or the plugin user's. */
  const expectOwnWorkerUid = (uid: unknown) => {
    expect(typeof uid).toBe('number');
    const [lo, hi] = t.config.agentIdentity.uidRange;
    expect(uid as number).toBeGreaterThanOrEqual(lo);
    expect(uid as number).toBeLessThanOrEqual(hi);
    expect([0, uidOf('service-agent'), uidOf('service-plugin')]).not.toContain(uid);
  };

  it('each plugin worker runs under a uid of its own with the plugin group: not root, not an agent, not another plugin', async () => {
    const p = (await t.http.post('/api/plugins/install').send({ localPath: PULSE }).expect(201)).body;
    await t.http.post(`/api/plugins/${p.id}/enable`).expect(200);
    const dash = (await t.http.get(`/api/plugins/${p.id}/dashboard`).expect(200)).body.dashboard;
    expectOwnWorkerUid(dash.uid);
    // the worker runs in a PID namespace of its own (issue 41): its pid there is not its pid on the host
    const pid = (await t.http.get(`/api/plugins/${p.id}/health`).expect(200)).body.worker.pid as number;
    expect(dash.pid).toBeLessThan(5);
    const pluginGid = gidOf('service-plugin') as number;
    expect(idsOf(pid)).toEqual({ uid: dash.uid, gid: pluginGid });
    // a clean environment: nothing of the service's (PWD: the install folder, set by the sandbox's shell)
    expect(
      environOf(pid)
        .map((e) => e.split('=')[0])
        .filter((k) => k !== 'PWD')
        .sort(),
    ).toEqual(['HOME', 'LOGNAME', 'NODE_ENV', 'PATH', 'PLUGIN_KEY', 'PLUGIN_PROTOCOL_VERSION', 'USER'].sort());
    const home = homeOf(pid) as string;
    expect(fs.statSync(home)).toMatchObject({ uid: dash.uid, gid: pluginGid });
    expect(fs.statSync(home).mode & 0o777).toBe(0o700);

    // a second plugin's worker: another uid, and neither can reach the other
    const w = (
      await t.http
        .post('/api/plugins/install')
        .send({ localPath: path.join(EXAMPLES, 'plugins', 'word-tools') })
        .expect(201)
    ).body;
    await t.http.post(`/api/plugins/${w.id}/enable`).expect(200);
    const other = (await t.http.get(`/api/plugins/${w.id}/health`).expect(200)).body.worker;
    expect(typeof other.pid).toBe('number');
    const otherIds = idsOf(other.pid);
    expectOwnWorkerUid(otherIds.uid);
    expect(otherIds.gid).toBe(pluginGid);
    expect(otherIds.uid).not.toBe(dash.uid);
    const otherHome = homeOf(other.pid) as string;
    expect(otherHome).not.toBe(home);
    // as the first worker's uid and group: the second's environment, signals and HOME are out of reach
    expect(asUid(dash.uid, pluginGid, 'true')).toBe(0);
    expect(asUid(dash.uid, pluginGid, `cat /proc/${other.pid}/environ`)).not.toBe(0);
    expect(asUid(dash.uid, pluginGid, `kill -0 ${other.pid}`)).not.toBe(0);
    expect(asUid(dash.uid, pluginGid, `ls '${otherHome}'`)).not.toBe(0);
    // its own are not
    expect(asUid(dash.uid, pluginGid, `cat /proc/${pid}/environ > /dev/null && ls '${home}'`)).toBe(0);
    await t.http.delete(`/api/plugins/${w.id}`).expect(200);
    await t.http.delete(`/api/plugins/${p.id}`).expect(200);
  });

  it('a planted file in the installed code: the worker refuses to start and the API says why', async () => {
    const source = copyOf(PULSE, 'pulse-src');
    const p = (await t.http.post('/api/plugins/install').send({ localPath: source }).expect(201)).body;
    await t.http.post(`/api/plugins/${p.id}/enable`).expect(200);
    await t.http.get(`/api/plugins/${p.id}/dashboard`).expect(200);
    // the worker's pid on the host (it runs in a PID namespace of its own: its own view differs)
    const hostPid = async () => {
      const w = (await t.http.get(`/api/plugins/${p.id}/health`).expect(200)).body.worker;
      return w.state === 'running' && typeof w.pid === 'number' ? (w.pid as number) : null;
    };
    const first = (await hostPid()) as number;

    // editing the source folder after install changes nothing that runs
    fs.writeFileSync(
      path.join(source, 'worker.js'),
      "require('./runtime').serve({ 'dashboard.get': async () => ({ pid: 'changed' }) });\n",
    );
    process.kill(first, 'SIGKILL');
    const againPid = await waitFor(async () => {
      const pid = await hostPid();
      return pid !== null && pid !== first ? pid : null;
    }, 'the worker to restart');
    const again = (await t.http.get(`/api/plugins/${p.id}/dashboard`).expect(200)).body.dashboard;
    expect(typeof again.pid).toBe('number');
    expect((await t.http.get(`/api/plugins/${p.id}`).expect(200)).body).toMatchObject({ status: 'enabled', error: null });

    // what an attacker who got past the permissions would do: plant a file, kill the worker
    const dir = await installPathOf(p.id);
    fs.writeFileSync(path.join(dir, 'worker.js'), fs.readFileSync(path.join(dir, 'worker.js'), 'utf8') + '\n// planted\n');
    process.kill(againPid, 'SIGKILL');
    const marked = await waitFor(async () => {
      const r = (await t.http.get(`/api/plugins/${p.id}`).expect(200)).body;
      return r.status === 'error' ? r : null;
    }, 'the plugin to be marked');
    expect(marked.error).toEqual({ code: 'code_tampered', message: 'installed code changed since install (hash mismatch)' });
    expect((await t.http.get(`/api/plugins/${p.id}/health`).expect(200)).body.worker.state).not.toBe('running');
    const refused = await t.http.get(`/api/plugins/${p.id}/dashboard`).expect(409);
    expect(refused.body.code).toBe('code_tampered');
    const logs = (await t.http.get(`/api/plugins/${p.id}/logs`).expect(200)).body.lines as Array<{ message: string }>;
    expect(logs.some((l) => /hash mismatch/.test(l.message))).toBe(true);
    // enabling again checks again: still refused
    await t.http.post(`/api/plugins/${p.id}/enable`).expect(200);
    await waitFor(async () => (await t.http.get(`/api/plugins/${p.id}`).expect(200)).body.status === 'error', 'refused again');
    // an upgrade re-seals the (current) source: it runs again
    await t.http.post(`/api/plugins/${p.id}/upgrade`).send({ localPath: PULSE }).expect(200);
    await t.http.post(`/api/plugins/${p.id}/enable`).expect(200);
    expectOwnWorkerUid((await t.http.get(`/api/plugins/${p.id}/dashboard`).expect(200)).body.dashboard.uid);
    await t.http.delete(`/api/plugins/${p.id}`).expect(200);
  });

  it('an install made before hashes were recorded (code elsewhere, no hash): its first start seals it and records the hash', async () => {
    const p = (await t.http.post('/api/plugins/install').send({ localPath: PULSE }).expect(201)).body;
    const sealed = await installPathOf(p.id);
    const legacy = path.join(tmp, 'legacy-home', 'plugins', 'team-pulse');
    fs.mkdirSync(path.dirname(legacy), { recursive: true });
    fs.cpSync(sealed, legacy, { recursive: true });
    await t.dataSource.query(`UPDATE plugins SET install_path = $2, code_hash = NULL WHERE id = $1`, [p.id, legacy]);
    await t.http.post(`/api/plugins/${p.id}/enable`).expect(200);
    expectOwnWorkerUid((await t.http.get(`/api/plugins/${p.id}/dashboard`).expect(200)).body.dashboard.uid);
    const [row] = await t.dataSource.query(`SELECT install_path, code_hash FROM plugins WHERE id = $1`, [p.id]);
    expect(row.code_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(row.install_path.startsWith(t.config.plugins.installDir + '/')).toBe(true);
    expect(ownershipProblems(row.install_path)).toEqual([]);
    await t.http.delete(`/api/plugins/${p.id}`).expect(200);
    fs.rmSync(sealed, { recursive: true, force: true });
  });

  it('refuses plugin sources writable by others (422 install_source_insecure)', async () => {
    const open = copyOf(PULSE, 'pulse-open');
    fs.chmodSync(open, 0o777);
    const res = await t.http.post('/api/plugins/install').send({ localPath: open }).expect(422);
    expect(res.body.code).toBe('install_source_insecure');
    expect(res.body.error).toMatch(/writable by others/);
    fs.chmodSync(open, 0o755);
    fs.chmodSync(path.join(open, 'worker.js'), 0o666);
    expect((await t.http.post('/api/plugins/install').send({ localPath: open }).expect(422)).body.code).toBe('install_source_insecure');
    expect((await t.http.get('/api/plugins').expect(200)).body).toEqual([]);
  });

  it('the folder host API serves only the company of the call the worker is serving', async () => {
    // a plugin that takes the company from its input (a confused deputy)
    const probe = copyOf(PULSE, 'pulse-probe');
    const manifest = JSON.parse(fs.readFileSync(path.join(probe, 'plugin.json'), 'utf8'));
    fs.writeFileSync(path.join(probe, 'plugin.json'), JSON.stringify({ ...manifest, key: 'pulse-probe' }));
    const code = fs.readFileSync(path.join(probe, 'worker.js'), 'utf8');
    fs.writeFileSync(
      path.join(probe, 'worker.js'),
      code.replace(
        "host.call('folders.list', { companyId,",
        "host.call('folders.list', { companyId: (params && params.asCompany) || companyId,",
      ),
    );
    const p = (await t.http.post('/api/plugins/install').send({ localPath: probe }).expect(201)).body;
    await t.http.post(`/api/plugins/${p.id}/enable`).expect(200);
    const a = await createCompany(t);
    const b = await createCompany(t);
    const bDir = path.join(tmp, 'b-reports');
    fs.mkdirSync(bDir);
    fs.writeFileSync(path.join(bDir, 'secret-plan.md'), 'company B only');
    await t.http.put(`/api/plugins/${p.id}/companies/${b.id}/local-folders/reports`).send({ path: bDir }).expect(200);
    const action = (companyId: string | undefined, params: Record<string, unknown>) =>
      t.http.post(`/api/plugins/${p.id}/bridge/action`).send({ key: 'read-report', ...(companyId ? { companyId } : {}), params });

    // for B itself: served
    expect((await action(b.id, {}).expect(200)).body.result.files).toEqual(['secret-plan.md']);
    // acting for A, naming B: refused
    const cross = await action(a.id, { asCompany: b.id });
    expect(cross.status).toBe(502);
    expect(cross.body.error).toMatch(/limited to the company of the call/);
    expect(JSON.stringify(cross.body)).not.toContain('secret-plan');
    // acting for no company (instance admin, no companyId): refused too
    const none = await action(undefined, { asCompany: b.id });
    expect(none.status).toBe(502);
    expect(JSON.stringify(none.body)).not.toContain('secret-plan');
    await t.http.delete(`/api/plugins/${p.id}`).expect(200);
  });

  describe('external adapters', () => {
    const TYPE = 'echo_external';
    const runOf = async (agentId: string): Promise<Record<string, unknown>> => {
      const res = await t.http.post(`/api/agents/${agentId}/wakeup`).send({ source: 'on_demand' }).expect(202);
      return waitFor(async () => {
        const [r] = await t.dataSource.query(`SELECT * FROM heartbeat_runs WHERE id = $1`, [res.body.id]);
        return r && ['succeeded', 'failed', 'cancelled', 'timed_out'].includes(r.status) ? r : null;
      }, 'the run to end');
    };

    it('refuses a source folder writable by others, or owned by another user (422 install_source_insecure)', async () => {
      const open = copyOf(ECHO, 'echo-open');
      fs.chmodSync(open, 0o777);
      const res = await t.http.post('/api/adapters/install').send({ localPath: open }).expect(422);
      expect(res.body).toMatchObject({ code: 'install_source_insecure' });
      fs.chmodSync(open, 0o755);
      fs.chownSync(path.join(open, 'index.js'), 12345, 12345);
      expect((await t.http.post('/api/adapters/install').send({ localPath: open }).expect(422)).body.code).toBe('install_source_insecure');
      // a folder below a directory writable by others (not sticky)
      const openParent = path.join(tmp, 'open-parent');
      fs.mkdirSync(openParent, { mode: 0o777 });
      fs.chmodSync(openParent, 0o777);
      const nested = path.join(openParent, 'echo');
      fs.cpSync(ECHO, nested, { recursive: true });
      expect((await t.http.post('/api/adapters/install').send({ localPath: nested }).expect(422)).body.code).toBe(
        'install_source_insecure',
      );
      expect((await t.http.get('/api/adapters').expect(200)).body.some((x: { type: string }) => x.type === TYPE)).toBe(false);
    });

    it('a local folder is copied and sealed: editing it changes nothing that runs, even after a reload; a changed copy is not loaded', async () => {
      const source = copyOf(ECHO, 'echo-src');
      await t.http.post('/api/adapters/install').send({ localPath: source }).expect(201);
      const copies = fs.readdirSync(t.config.adapters.installDir).map((n) => path.join(t.config.adapters.installDir, n));
      expect(copies).toHaveLength(1);
      expect(ownershipProblems(copies[0])).toEqual([]);
      expect(asStranger(`echo x >> '${copies[0]}/index.js'`)).not.toBe(0);

      const c = await createCompany(t);
      const agent = (
        await t.http
          .post(`/api/companies/${c.id}/agents`)
          .send({ name: 'Echo', role: 'general', adapterType: TYPE, adapterConfig: { message: 'm' } })
          .expect(201)
      ).body;
      expect((await runOf(agent.id)).result_json).toMatchObject({ codeVersion: 'v1' });

      // an agent (or anyone) edits the source folder: a reload still runs the installed code
      const index = path.join(source, 'index.js');
      fs.writeFileSync(index, fs.readFileSync(index, 'utf8').replace(/const CODE_VERSION = '[^']*'/, "const CODE_VERSION = 'planted'"));
      await t.http.post(`/api/adapters/${TYPE}/reload`).expect(200);
      expect((await runOf(agent.id)).result_json).toMatchObject({ codeVersion: 'v1' });

      // the sealed copy itself changed (someone got past the permissions): the reload refuses and says why
      const copy = path.join(copies[0], 'index.js');
      fs.appendFileSync(copy, '\n// planted\n');
      const refused = await t.http.post(`/api/adapters/${TYPE}/reload`).expect(409);
      expect(refused.body).toMatchObject({ code: 'code_tampered' });
      const entry = (await t.http.get('/api/adapters').expect(200)).body.find((x: { type: string }) => x.type === TYPE);
      expect(entry).toMatchObject({
        executable: false,
        loadErrorCode: 'code_tampered',
        loadError: 'installed code changed since install (hash mismatch)',
      });
      await t.http.delete(`/api/adapters/${TYPE}`).expect(200);
    });
  });
});
