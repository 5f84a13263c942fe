import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { freePort } from '../../src/database/embedded-postgres';
import { emptyDatabase } from '../support/backups';
import { aos, call } from '../support/cli';
import { waitFor } from '../support/heartbeat';
import { ServiceProcess, startService } from '../support/service-process';
import { createTestDatabase } from '../support/test-app';

jest.setTimeout(180_000);

const tmpDir = (prefix: string) => fs.mkdtempSync(path.join(os.tmpdir(), prefix));
let dbCounter = 0;
const freshName = () => `cli_${process.pid}_${Date.now().toString(36)}_${dbCounter++}`;

describe('aos --help', () => {
  const commands = [
    [],
    ['doctor'],
    ['status'],
    ['migrate'],
    ['backup'],
    ['restore'],
    ['export'],
    ['import'],
    ['claim'],
    ['token'],
    ['token', 'create'],
    ['token', 'list'],
    ['token', 'revoke'],
  ];

  it.each(commands.map((c) => [c.join(' ') || '(root)', c]))('%s: usage and options, exit 0', async (_name, cmd) => {
    const r = await aos([...(cmd as string[]), '--help']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`Usage: aos${(cmd as string[]).length ? ' ' + (cmd as string[]).join(' ') : ''}`);
    expect(r.stdout).toMatch(/-h, --help/);
  });

  it('an unknown command exits non-zero with the usage', async () => {
    const r = await aos(['frobnicate']);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain("unknown command 'frobnicate'");
  });
});

describe('aos migrate', () => {
  it('applies every migration to an empty database, then finds it up to date; --check exits 1 while some are pending', async () => {
    const url = await emptyDatabase(process.env.TEST_PG_ADMIN_URL!, freshName());
    const dataDir = tmpDir('cli-migrate-');
    const env = { DATABASE_URL: url, SERVICE_DATA_DIR: dataDir };
    const check = await aos(['--json', 'migrate', '--check'], env);
    expect(check.code).toBe(1);
    expect(check.json.pending.length).toBeGreaterThan(10);
    const first = await aos(['migrate'], env);
    expect(first.code).toBe(0);
    // not a terminal: the service's JSON log format, the result on the line
    const [line] = first.lines().filter((l) => l.result);
    expect(line).toMatchObject({ level: 30, context: 'migrate' });
    expect(line.result.applied.length).toBe(check.json.pending.length);
    const again = await aos(['--json', 'migrate'], env);
    expect(again).toMatchObject({ code: 0, json: { applied: [] } });
    expect(fs.existsSync(path.join(dataDir, 'keys'))).toBe(false); // no key files written
  });
});

describe('aos doctor', () => {
  let svc: ServiceProcess;
  let dataDir: string;
  let databaseUrl: string;
  beforeAll(async () => {
    dataDir = tmpDir('cli-doctor-');
    databaseUrl = await createTestDatabase();
    svc = await startService({ DATABASE_URL: databaseUrl, SERVICE_DATA_DIR: dataDir });
  });
  afterAll(async () => {
    await svc.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('on a good setup: configuration, data directory, database migrated, versions and the service all pass (exit 0)', async () => {
    const r = await aos(['--json', 'doctor', '--url', svc.baseUrl], { DATABASE_URL: databaseUrl, SERVICE_DATA_DIR: dataDir });
    expect(r.json.checks.filter((c: { status: string }) => c.status === 'fail')).toEqual([]);
    expect(r.code).toBe(0);
    const byName = Object.fromEntries(r.json.checks.map((c: { name: string }) => [c.name, c]));
    expect(byName.config.status).toBe('ok');
    expect(byName.data_dir_mode).toMatchObject({ status: 'ok' });
    expect(byName.keys_mode).toMatchObject({ status: 'ok' });
    expect(byName.database.message).toMatch(/reachable \(DATABASE_URL\), PostgreSQL \d+/);
    expect(byName.migrations.message).toMatch(/^all \d+ migrations applied$/);
    expect(byName.secrets_key.status).toBe('ok');
    expect(byName.node.message).toContain(process.version);
    expect(byName.service.message).toMatch(/answers: ok/);
    if (process.getuid?.() === 0) expect(byName.setpriv.status).toBe('ok');
    // stdout is the JSON document only: the log lines went to stderr
    expect(r.stdout.trim().startsWith('{')).toBe(true);
  });

  it('on a broken setup: an unreachable database and a data directory open to others fail (exit 1) and say what --fix would do', async () => {
    const broken = tmpDir('cli-doctor-broken-');
    fs.chmodSync(broken, 0o755);
    const env = { DATABASE_URL: 'postgres://nobody:nothing@127.0.0.1:1/none', SERVICE_DATA_DIR: broken };
    const r = await aos(['--json', 'doctor', '--url', 'http://127.0.0.1:1'], env);
    expect(r.code).toBe(1);
    const byName = Object.fromEntries(r.json.checks.map((c: { name: string }) => [c.name, c]));
    expect(byName.database).toMatchObject({ status: 'fail' });
    expect(byName.database.message).toMatch(/not reachable/);
    expect(byName.data_dir_mode).toMatchObject({ status: 'fail', fix: `chmod 0700 ${broken}` });
    expect(byName.service.status).toBe('skip');
    expect(fs.statSync(broken).mode & 0o777).toBe(0o755); // nothing changed without --fix

    const fixed = await aos(['--json', 'doctor', '--fix', '--url', 'http://127.0.0.1:1'], env);
    const after = Object.fromEntries(fixed.json.checks.map((c: { name: string }) => [c.name, c]));
    expect(after.data_dir_mode).toMatchObject({ status: 'ok', fixed: true });
    expect(fs.statSync(broken).mode & 0o777).toBe(0o700);
    expect(fixed.code).toBe(1); // the database is still unreachable: not a safe fix
    fs.rmSync(broken, { recursive: true, force: true });
  });

  it('reports an invalid configuration as a failed check, and a data directory that is a file', async () => {
    const file = path.join(tmpDir('cli-doctor-file-'), 'not-a-dir');
    fs.writeFileSync(file, '');
    const r = await aos(['--json', 'doctor'], { DATABASE_URL: 'mysql://x', SERVICE_DATA_DIR: file });
    expect(r.code).toBe(1);
    const byName = Object.fromEntries(r.json.checks.map((c: { name: string }) => [c.name, c]));
    expect(byName.config).toMatchObject({ status: 'fail' });
    expect(byName.config.message).toContain('DATABASE_URL must be a postgres://');
    expect(byName.data_dir).toMatchObject({ status: 'fail', message: `${file} is not a directory` });
  });

  const byNameOf = (r: { json: { checks: Array<{ name: string }> } }): Record<string, any> =>
    Object.fromEntries(r.json.checks.map((c) => [c.name, c]));
  const portOf = (url: string) => new URL(url).port;

  it('without PORT or --url checks the service of its data directory (its listening.json), and aos status talks to it too', async () => {
    const env = { DATABASE_URL: databaseUrl, SERVICE_DATA_DIR: dataDir };
    const r = await aos(['--json', 'doctor'], env);
    expect(byNameOf(r).service).toMatchObject({ status: 'ok', message: expect.stringMatching(new RegExp(`^${svc.baseUrl} answers: ok`)) });
    expect(r.code).toBe(0);
    expect((await aos(['--json', 'status'], env)).code).toBe(0);
    // an explicit --url is taken as another way to it (a proxy, another name)
    const named = await aos(['--json', 'doctor', '--url', `http://localhost:${portOf(svc.baseUrl)}`], env);
    expect(byNameOf(named).service).toMatchObject({ status: 'ok' });
  });

  it('PORT pointing away from the data directory’s service: the service check fails and names where it listens', async () => {
    const elsewhere = String(await freePort());
    const r = await aos(['--json', 'doctor'], { DATABASE_URL: databaseUrl, SERVICE_DATA_DIR: dataDir, PORT: elsewhere });
    expect(byNameOf(r).service).toMatchObject({ status: 'fail' });
    expect(byNameOf(r).service.message).toContain(`nothing answers at http://127.0.0.1:${elsewhere}`);
    expect(byNameOf(r).service.message).toContain(`listens on ${svc.baseUrl}`);
    expect(r.code).toBe(1);
  });

  it('another data directory’s service answering where PORT points is a warning, not a healthy service; an invalid DATABASE_URL does not make it ignore PORT', async () => {
    const other = tmpDir('cli-doctor-other-');
    const port = portOf(svc.baseUrl);
    const r = await aos(['--json', 'doctor'], { DATABASE_URL: databaseUrl, SERVICE_DATA_DIR: other, PORT: port });
    expect(byNameOf(r).service).toMatchObject({ status: 'warn' });
    expect(byNameOf(r).service.message).toContain(`no service of ${other} is running`);
    const invalid = await aos(['--json', 'doctor'], { DATABASE_URL: 'mysql://x', SERVICE_DATA_DIR: other, PORT: port });
    expect(byNameOf(invalid).config).toMatchObject({ status: 'fail' });
    expect(byNameOf(invalid).service.message).toContain(`http://127.0.0.1:${port} answers`);
    fs.rmSync(other, { recursive: true, force: true });
  });

  it('logs one JSON line per check when stdout is not a terminal', async () => {
    const r = await aos(['doctor', '--url', svc.baseUrl], { DATABASE_URL: databaseUrl, SERVICE_DATA_DIR: dataDir });
    const lines = r.lines();
    expect(lines.find((l) => l.check === 'migrations')).toMatchObject({ level: 30, context: 'doctor', status: 'ok' });
    expect(lines[lines.length - 1]).toMatchObject({ healthy: true, msg: expect.stringMatching(/^healthy/) });
  });
});

describe('aos doctor with the embedded database', () => {
  it('starts the data directory’s embedded database when no service holds it (as docs/cli.md says), checks it, and stops it after', async () => {
    const dataDir = tmpDir('cli-doctor-embedded-');
    const svc = await startService({ SERVICE_DATA_DIR: dataDir });
    await svc.stop();
    const pidFile = path.join(dataDir, 'db', 'postmaster.pid');
    expect(fs.existsSync(pidFile)).toBe(false);
    // a port of its own: another service on this host's default port would be reported (a warning)
    const r = await aos(['--json', 'doctor'], { SERVICE_DATA_DIR: dataDir, PORT: String(await freePort()) });
    const byName = Object.fromEntries(r.json.checks.map((c: { name: string }) => [c.name, c]));
    expect(byName.database).toMatchObject({ status: 'ok', message: expect.stringMatching(/^reachable \(embedded \(started\)\)/) });
    expect(byName.migrations).toMatchObject({ status: 'ok' });
    expect(byName.service).toMatchObject({ status: 'skip' });
    expect(r.code).toBe(0);
    expect(fs.existsSync(pidFile)).toBe(false);
    fs.rmSync(dataDir, { recursive: true, force: true });
  });
});

describe('aos status, claim and token against a running service', () => {
  let local: ServiceProcess;
  let authd: ServiceProcess;
  let authDb: string;
  const authDir = tmpDir('cli-auth-');
  beforeAll(async () => {
    local = await startService({
      DATABASE_URL: await createTestDatabase(),
      SERVICE_DATA_DIR: tmpDir('cli-local-'),
      SERVICE_HEARTBEAT_TICK_MS: '200',
    });
    authDb = await createTestDatabase();
    authd = await startService({ DATABASE_URL: authDb, SERVICE_DATA_DIR: authDir, SERVICE_DEPLOYMENT_MODE: 'authenticated' });
  });
  afterAll(async () => {
    await Promise.all([local.stop(), authd.stop()]);
  });
  const authEnv = () => ({
    DATABASE_URL: authDb,
    SERVICE_DATA_DIR: authDir,
    SERVICE_DEPLOYMENT_MODE: 'authenticated',
    SERVICE_PUBLIC_URL: authd.baseUrl,
  });

  it('status: live runs, queue depth and the instance running them', async () => {
    const company = await call(local.baseUrl, 'POST', '/api/companies', { name: `Status Co ${Date.now()}` });
    const agent = await call(local.baseUrl, 'POST', `/api/companies/${company.body.id}/agents`, {
      name: 'Sleeper',
      role: 'general',
      adapterType: 'process',
      adapterConfig: { command: 'sleep', args: ['60'], graceSec: 1 },
    });
    expect(agent.status).toBe(201);
    const wake = await call(local.baseUrl, 'POST', `/api/agents/${agent.body.id}/wakeup`, { source: 'on_demand', triggerDetail: 'manual' });
    const run = await waitFor(async () => {
      const r = await call(local.baseUrl, 'GET', `/api/heartbeat-runs/${wake.body.id}`);
      return r.body.status === 'running' && r.body;
    }, 'run running');
    const r = await aos(['--json', 'status', '--url', local.baseUrl]);
    expect(r.code).toBe(0);
    expect(r.json).toMatchObject({ status: 'ok', ready: true, liveRuns: { running: 1, queued: 0 }, queueDepth: 0 });
    expect(r.json.instances).toEqual([{ id: run.claimedBy, runningRuns: 1 }]);
    expect(r.json.companies).toContainEqual(expect.objectContaining({ id: company.body.id, running: 1, queued: 0 }));
    await call(local.baseUrl, 'POST', `/api/heartbeat-runs/${wake.body.id}/cancel`);
  });

  it('status: a service that does not answer is exit 1 with service_unreachable', async () => {
    const r = await aos(['--json', 'status', '--url', 'http://127.0.0.1:1']);
    expect(r.code).toBe(1);
    expect(r.json).toMatchObject({ code: 'service_unreachable' });
  });

  it('status: authenticated without a token is a clear 401 error', async () => {
    const r = await aos(['--json', 'status', '--url', authd.baseUrl]);
    expect(r.code).toBe(1);
    expect(r.json.code).toBe('unauthorized');
    expect(r.json.error).toContain('--token');
  });

  it('claim: prints a working claim link of an unowned instance, then says it is owned; token: a board token for a user', async () => {
    // not a terminal and no --json: the link is printed as it is, never as a log line
    const plain = await aos(['claim'], authEnv());
    expect(plain.code).toBe(0);
    expect(plain.stdout).toMatch(/^Board claim link .*\n.*\/api\/board-claim\/svc_bc_/);
    const c = await aos(['--json', 'claim'], authEnv());
    expect(c.code).toBe(0);
    expect(c.json.claimUrl).toMatch(new RegExp(`^${authd.baseUrl}/api/board-claim/svc_bc_[A-Za-z0-9_-]{43}/claim$`));
    const claimPath = c.json.claimUrl.slice(authd.baseUrl.length);
    expect(c.json.statusUrl).toBe(c.json.claimUrl.replace(/\/claim$/, ''));
    expect((await call(authd.baseUrl, 'GET', claimPath.replace(/\/claim$/, ''))).body).toMatchObject({ status: 'pending' });
    const password = 'a long enough password';
    const user = await call(authd.baseUrl, 'POST', '/api/auth/sign-up/email', { email: 'owner@example.test', password, name: 'Owner' });
    expect((await call(authd.baseUrl, 'POST', claimPath, {}, user.body.token)).status).toBe(200);
    const owned = await aos(['--json', 'claim'], authEnv());
    expect(owned.json).toEqual({ claimUrl: null, reason: 'owned' });

    const t = await aos(
      ['--json', '--url', authd.baseUrl, 'token', 'create', '--name', 'ci', '--email', 'owner@example.test', '--password-stdin'],
      {},
      password + '\n',
    );
    expect(t.code).toBe(0);
    expect(t.json).toMatchObject({ name: 'ci', expiresAt: null });
    expect(t.json.token).toMatch(/^svc_bt_/);
    const me = await call(authd.baseUrl, 'GET', '/api/cli-auth/me', undefined, t.json.token);
    expect(me.body).toMatchObject({ persona: 'board', credential: 'board_token', user: { isInstanceAdmin: true } });
    // the token then drives the other commands
    const s = await aos(['--json', 'status', '--url', authd.baseUrl, '--token', t.json.token]);
    expect(s.code).toBe(0);
    const list = await aos(['--json', '--url', authd.baseUrl, 'token', 'list'], { SERVICE_TOKEN: t.json.token });
    expect(list.json.map((x: { name: string }) => x.name)).toContain('ci');
    expect(JSON.stringify(list.json)).not.toContain(t.json.token);
    const bad = await aos(['--json', '--url', authd.baseUrl, 'token', 'create', '--name', 'x', '--email', 'owner@example.test'], {
      SERVICE_PASSWORD: 'wrong password',
    });
    expect(bad.code).toBe(1);
    expect(bad.json.code).toBe('invalid_credentials');
  });

  it('claim in local_trusted mode: nothing to claim', async () => {
    const r = await aos(['--json', 'claim'], { DATABASE_URL: authDb, SERVICE_DATA_DIR: authDir });
    expect(r.json).toEqual({ claimUrl: null, reason: 'local_trusted' });
  });
});
