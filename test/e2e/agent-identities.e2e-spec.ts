import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { FIXTURES, insertAgent, runLogText, scratchDir, TERMINAL, waitFor, waitRun, wakeRun } from '../support/heartbeat';
import { createCompany } from '../support/factories';
import { createSecret, secretRef, setAgentEnv } from '../support/secrets';
import { ServiceProcess, startService } from '../support/service-process';
import { createTestApp, createTestDatabase, TestApp } from '../support/test-app';

const asRoot = process.getuid?.() === 0;
const rootIt = asRoot ? it : it.skip;
const AGENTS_ROOT = () => process.env.SERVICE_AGENT_ROOT as string;

const probeOf = (log: string): Record<string, any> => {
  const line = log.split('\n').find((l) => l.startsWith('PROBE '));
  if (!line) throw new Error(`no probe output in log:\n${log}`);
  return JSON.parse(line.slice('PROBE '.length));
};

/** Host pids of the processes running under `uid`. */
function pidsOfUid(uid: number): number[] {
  const out: number[] = [];
  for (const e of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(e)) continue;
    try {
      const status = fs.readFileSync(`/proc/${e}/status`, 'utf8');
      const state = /^State:\s+(\S)/m.exec(status)?.[1];
      if (Number(/^Uid:\s+(\d+)/m.exec(status)?.[1]) === uid && state !== 'Z') out.push(Number(e));
    } catch {
      /* gone */
    }
  }
  return out;
}

const readJson = (file: string) => (fs.existsSync(file) && fs.statSync(file).size > 0 ? JSON.parse(fs.readFileSync(file, 'utf8')) : null);

describe('an OS identity per agent: agents reach nothing that is not theirs', () => {
  let t: TestApp;
  let work: string;

  beforeAll(async () => {
    t = await createTestApp({ listen: true, env: { SERVICE_HEARTBEAT_KEEPALIVE_MS: '100' } });
    work = scratchDir('identities-');
  });
  afterAll(async () => {
    await t.close();
    fs.rmSync(work, { recursive: true, force: true });
  });

  const victimConfig = (report: string, mode?: string) => ({
    command: process.execPath,
    args: [path.join(FIXTURES, 'sandbox-victim.js'), report, ...(mode ? [mode] : [])],
    graceSec: 1,
  });

  rootIt(
    "two companies' agents at once: A cannot read B's environment, HOME or scratch, cannot signal it, and cannot read the key files",
    async () => {
      const companyA = (await createCompany(t)).id;
      const companyB = (await createCompany(t)).id;
      const secret = await createSecret(t, companyB);
      const report = path.join(work, `victim-${Date.now()}.json`);
      const victim = await insertAgent(t, companyB, { adapterConfig: victimConfig(report) });
      await setAgentEnv(t, victim.id, { VICTIM_SECRET: secretRef(secret.id) });
      const victimRun = await wakeRun(t, victim.id);
      const v = await waitFor(async () => readJson(report), 'the victim to start');
      const victimPids = pidsOfUid(v.uid);
      expect(victimPids.length).toBeGreaterThan(0);

      // the victim's identity: its own uid, its company's group only, a private HOME and TMPDIR
      expect(v.uid).not.toBe(0);
      expect(v.groups).toEqual([v.gid]);
      expect(v.homeMode).toBe('700');
      expect(v.tmpMode).toBe('700');
      expect(fs.statSync(v.home).uid).toBe(v.uid);

      const attacker = await insertAgent(t, companyA, {
        adapterConfig: {
          command: process.execPath,
          args: [
            path.join(FIXTURES, 'sandbox-attacker.js'),
            JSON.stringify({
              victimHome: v.home,
              victimTmp: v.tmp,
              victimHostPids: victimPids,
              secret: secret.plaintext,
              readFiles: [path.join(t.dataDir, 'keys', 'secrets-master-key'), path.join(t.dataDir, 'keys', 'jwt-secret')],
            }),
          ],
        },
      });
      const attackRun = await wakeRun(t, attacker.id);
      expect(await waitRun(t, attackRun, TERMINAL)).toMatchObject({ status: 'succeeded' });
      const log = await runLogText(t, attackRun);
      expect(log).not.toContain(secret.plaintext);
      const p = probeOf(log);
      expect(p.uid).not.toBe(v.uid);
      expect(p.gid).not.toBe(v.gid);
      expect(p.home).not.toBe(v.home);
      expect(p.environs).toMatchObject({ readable: 0, leaked: false });
      expect(p.homeList).toBe('EACCES');
      expect(p.homeRead).toBe('EACCES');
      expect(p.homeWrite).toBe('EACCES');
      expect(p.tmpList).toBe('EACCES');
      expect(p.tmpRead).toBe('EACCES');
      for (const s of p.signals) expect(['EPERM', 'ESRCH']).toContain(s);
      for (const r of p.reads) expect(r).toBe('EACCES');
      // the victim is still running, untouched
      expect((await waitRun(t, victimRun, ['running'])).status).toBe('running');
      expect(pidsOfUid(v.uid).length).toBeGreaterThan(0);

      await t.http.post(`/api/heartbeat-runs/${victimRun}/cancel`).send({}).expect(200);
      await waitRun(t, victimRun, TERMINAL);
      // the run's scratch went with it; its processes too
      await waitFor(async () => !fs.existsSync(path.dirname(v.tmp)), 'the run scratch to be removed');
      await waitFor(async () => pidsOfUid(v.uid).length === 0, 'the victim processes to end');

      // the HOME persists across runs (the CLIs keep sessions there), and it is the same identity
      const check = path.join(work, `check-${Date.now()}.json`);
      await t.http
        .patch(`/api/agents/${victim.id}`)
        .send({ adapterConfig: victimConfig(check, 'check') })
        .expect(200);
      expect(await waitRun(t, await wakeRun(t, victim.id), TERMINAL)).toMatchObject({ status: 'succeeded' });
      expect(readJson(check)).toEqual({ home: v.home, kept: 'victim-private' });
    },
    60_000,
  );

  rootIt('agents of one company share its group, not their uid; the identity is stable and host-wide', async () => {
    const co = (await createCompany(t)).id;
    const one = path.join(work, `one-${Date.now()}.json`);
    const two = path.join(work, `two-${Date.now()}.json`);
    const probe = (file: string) => ({
      command: process.execPath,
      args: [
        '-e',
        `require('fs').writeFileSync(${JSON.stringify(file)}, JSON.stringify({uid: process.getuid(), gid: process.getgid(), home: process.env.HOME}))`,
      ],
    });
    const a = await insertAgent(t, co, { adapterConfig: probe(one) });
    const b = await insertAgent(t, co, { adapterConfig: probe(two) });
    expect(await waitRun(t, await wakeRun(t, a.id), TERMINAL)).toMatchObject({ status: 'succeeded' });
    expect(await waitRun(t, await wakeRun(t, b.id), TERMINAL)).toMatchObject({ status: 'succeeded' });
    const [ra, rb] = [readJson(one), readJson(two)];
    expect(ra.uid).not.toBe(rb.uid);
    expect(ra.gid).toBe(rb.gid);
    expect(ra.home).toMatch(new RegExp(`^${path.join(AGENTS_ROOT(), 'homes', String(ra.uid))}-[0-9a-f]{16}$`));
    // the registry, homes and run folders cannot be listed by agents
    expect(fs.statSync(path.join(AGENTS_ROOT(), 'ids')).mode & 0o777).toBe(0o700);
    expect(fs.statSync(path.join(AGENTS_ROOT(), 'homes')).mode & 0o777).toBe(0o711);
    expect(fs.readFileSync(path.join(AGENTS_ROOT(), 'ids', `u${ra.uid}`), 'utf8')).toBe(`agent:${a.id}`);
  });

  rootIt("the registry cannot be listed or probed by agents: etc/ is root's, home names cannot be guessed (issue 41)", async () => {
    const co = (await createCompany(t)).id;
    const first = path.join(work, `first-${Date.now()}.json`);
    const a = await insertAgent(t, co, {
      adapterConfig: {
        command: process.execPath,
        args: ['-e', `require('fs').writeFileSync(${JSON.stringify(first)}, JSON.stringify({ uid: process.getuid() }))`],
      },
    });
    expect(await waitRun(t, await wakeRun(t, a.id), TERMINAL)).toMatchObject({ status: 'succeeded' });
    const other = readJson(first).uid as number;
    const report = path.join(work, `registry-${Date.now()}.json`);
    const root = AGENTS_ROOT();
    const script = `
      const fs = require('fs');
      const code = (fn) => { try { fn(); return 'ok'; } catch (e) { return e.code; } };
      fs.writeFileSync(${JSON.stringify(report)}, JSON.stringify({
        listEtc: code(() => fs.readdirSync(${JSON.stringify(path.join(root, 'etc'))})),
        readEtc: code(() => fs.readFileSync(${JSON.stringify(path.join(root, 'etc', `passwd-${other}`))})),
        listHomes: code(() => fs.readdirSync(${JSON.stringify(path.join(root, 'homes'))})),
        otherHome: code(() => fs.statSync(${JSON.stringify(path.join(root, 'homes', String(other)))})),
        noHome: code(() => fs.statSync(${JSON.stringify(path.join(root, 'homes', '2999998'))})),
        ownHome: code(() => fs.readdirSync(process.env.HOME)),
        ownPasswd: code(() => fs.readFileSync('/etc/passwd')),
      }));`;
    const b = await insertAgent(t, co, { adapterConfig: { command: process.execPath, args: ['-e', script] } });
    expect(await waitRun(t, await wakeRun(t, b.id), TERMINAL)).toMatchObject({ status: 'succeeded' });
    expect(readJson(report)).toEqual({
      listEtc: 'EACCES',
      readEtc: 'EACCES',
      listHomes: 'EACCES',
      // another agent's home answers like a uid never handed out
      otherHome: 'ENOENT',
      noHome: 'ENOENT',
      ownHome: 'ok',
      ownPasswd: 'ok',
    });
    expect(fs.statSync(path.join(root, 'etc')).mode & 0o777).toBe(0o700);
  });

  rootIt('a command or script the agent identity cannot read fails the run with an error naming the path and the identity', async () => {
    const co = (await createCompany(t)).id;
    const closed = fs.mkdtempSync(path.join(work, 'closed-'));
    fs.chmodSync(closed, 0o700);
    const script = path.join(closed, 'agent.js');
    fs.writeFileSync(script, 'console.log("hi")');
    const agent = await insertAgent(t, co, { adapterConfig: { command: process.execPath, args: [script] } });
    const row = await waitRun(t, await wakeRun(t, agent.id), TERMINAL);
    expect(row).toMatchObject({ status: 'failed', error_code: 'adapter_command_not_accessible' });
    expect(row.error).toContain(script);
    expect(row.error).toMatch(/agent identity agent-[0-9a-f]{8} \(uid \d+\)/);
    // the environment test says so before any run
    const report = (await t.http.post(`/api/agents/${agent.id}/test-environment`).send({}).expect(200)).body;
    expect(report.ok).toBe(false);
    expect(report.checks).toContainEqual(
      expect.objectContaining({ name: 'agent_identity', ok: false, message: expect.stringContaining(script) }),
    );
    fs.chmodSync(closed, 0o755);
    fs.chmodSync(script, 0o644);
    const fixed = (await t.http.post(`/api/agents/${agent.id}/test-environment`).send({}).expect(200)).body;
    expect(fixed.checks).toContainEqual(expect.objectContaining({ name: 'agent_identity', ok: true }));
  });

  rootIt('delivered skills live in the run scratch, private to the agent, and go with the run', async () => {
    const co = (await createCompany(t)).id;
    const file = path.join(work, `skills-${Date.now()}.json`);
    const agent = await insertAgent(t, co, {
      adapterConfig: {
        command: process.execPath,
        args: [
          '-e',
          `const fs=require('fs');const d=process.env.SERVICE_SKILLS_DIR;fs.writeFileSync(${JSON.stringify(file)}, JSON.stringify({d, mode:(fs.statSync(d).mode&0o777).toString(8), owner: fs.statSync(d).uid, uid: process.getuid(), entries: fs.readdirSync(d)}))`,
        ],
      },
    });
    expect(await waitRun(t, await wakeRun(t, agent.id), TERMINAL)).toMatchObject({ status: 'succeeded' });
    const r = readJson(file);
    expect(r.d.startsWith(path.join(AGENTS_ROOT(), 'runs'))).toBe(true);
    expect(r.mode).toBe('700');
    expect(r.owner).toBe(r.uid);
    expect(r.entries.length).toBeGreaterThan(0);
    expect(fs.existsSync(r.d)).toBe(false);
  });
});

describe('agent processes die with their instance; run scratch of a dead instance is swept', () => {
  let databaseUrl: string;
  let dataDir: string;
  let work: string;
  let svc: ServiceProcess | undefined;
  // an agent root (and uid range) of its own: every instance that starts sweeps the run folders of
  // dead instances under its root, and other files' instances start while this one lies dead
  let agentRoot: string;

  beforeAll(async () => {
    databaseUrl = await createTestDatabase();
    dataDir = scratchDir('identities-data-');
    work = scratchDir('identities-svc-');
    agentRoot = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-test-identities-root-'));
    fs.chmodSync(agentRoot, 0o711);
  }, 360_000);
  afterAll(async () => {
    await svc?.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
    fs.rmSync(work, { recursive: true, force: true });
    fs.rmSync(agentRoot, { recursive: true, force: true });
  });

  rootIt(
    'kill -9 of the service ends every process of its agents (children included); a restart sweeps the dead run folders',
    async () => {
      const env = {
        DATABASE_URL: databaseUrl,
        SERVICE_DATA_DIR: dataDir,
        SERVICE_HEARTBEAT_TICK_MS: '200',
        SERVICE_AGENT_ROOT: agentRoot,
        SERVICE_AGENT_UID_RANGE: '3100000-3100999',
      };
      svc = await startService(env);
      const company = await svc.api('POST', '/api/companies', { name: `Pdeath ${Date.now()}` });
      const report = path.join(work, 'uid.txt');
      const agent = await svc.api('POST', `/api/companies/${company.body.id}/agents`, {
        name: 'Long runner',
        role: 'general',
        adapterType: 'process',
        // a leader and a grandchild: both must go when the instance dies
        adapterConfig: { command: 'sh', args: ['-c', `id -u > ${report}; sleep 300 & sleep 301 & wait`] },
      });
      expect(agent.status).toBe(201);
      expect((await svc.api('POST', `/api/agents/${agent.body.id}/wakeup`, { source: 'on_demand', reason: 'x' })).status).toBe(202);
      const uid = await waitFor(async () => fs.existsSync(report) && Number(fs.readFileSync(report, 'utf8').trim()), 'the agent to start');
      await waitFor(async () => pidsOfUid(uid).length >= 3, 'the agent and its children');
      const runsDir = path.join(agentRoot, 'runs');
      const leftover = fs.readdirSync(runsDir).filter((d) => fs.existsSync(path.join(runsDir, d, '.owner')));
      expect(leftover.length).toBeGreaterThan(0);
      await svc.crash();
      svc = undefined;
      // parent-death signal and the PID namespace: nothing of the agent outlives the instance
      await waitFor(async () => pidsOfUid(uid).length === 0, 'agent processes to die with the instance', 10_000);
      // a dead instance's run folder: the next start removes it
      const ours = leftover.filter((d) => fs.existsSync(path.join(runsDir, d)));
      expect(ours.length).toBeGreaterThan(0);
      svc = await startService(env);
      await waitFor(async () => ours.every((d) => !fs.existsSync(path.join(runsDir, d))), 'the sweep', 10_000);
    },
    120_000,
  );
});
