import { spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { freePort } from '../../src/database/embedded-postgres';
import { sleep } from '../support/heartbeat';
import { ensureBuilt, ensureBuiltDir, startService } from '../support/service-process';
import { createTestDatabase } from '../support/test-app';

jest.setTimeout(240_000);

const ROOT = path.join(__dirname, '..', '..');
const tmpDir = () => fs.mkdtempSync(path.join(os.tmpdir(), 'svc-ops-'));
const baseEnv = () => ({ PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '' });

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Waits until none of `pids` is alive; false after `ms`. */
async function allGone(pids: number[], ms: number): Promise<boolean> {
  for (const deadline = Date.now() + ms; Date.now() < deadline; await sleep(100)) {
    // a zombie (exited, not yet reaped by its parent) counts as gone
    if (pids.every((p) => !alive(p) || /\) Z /.test(fs.readFileSync(`/proc/${p}/stat`, 'utf8')))) return true;
  }
  return false;
}

function parentOf(pid: number): number {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
}

describe('start-up with a data directory that cannot be created', () => {
  let main = '';
  beforeAll(async () => {
    main = await ensureBuilt();
  });

  it.each(['/proc/x', '/sys/x', '/etc/passwd/x'])('SERVICE_DATA_DIR=%s: one clear JSON line and exit 1 at once', async (dir) => {
    const res = spawnSync(process.execPath, [main], {
      cwd: ROOT,
      env: { ...baseEnv(), SERVICE_DATA_DIR: dir, PORT: '0' },
      encoding: 'utf8',
      timeout: 10_000,
    });
    // it used to hang at 100% CPU: the spawn's timeout would kill it (status null, signal SIGTERM)
    expect(res.status).toBe(1);
    const lines = (res.stdout + res.stderr).trim().split('\n');
    expect(lines).toHaveLength(1);
    const line = JSON.parse(lines[0]);
    expect(line).toMatchObject({ level: 60 });
    expect(line.msg).toContain(`SERVICE_DATA_DIR ${dir} cannot be created`);
    expect(line.msg).not.toMatch(/\n\s+at /);
  });
});

describe('start-up with a DATABASE_URL that does not answer', () => {
  let main = '';
  beforeAll(async () => {
    main = await ensureBuilt();
  });

  const startWith = (databaseUrl: string) => {
    const res = spawnSync(process.execPath, [main], {
      cwd: ROOT,
      env: { ...baseEnv(), SERVICE_DATA_DIR: path.join(tmpDir(), 'data'), PORT: '0', DATABASE_URL: databaseUrl },
      encoding: 'utf8',
      timeout: 30_000,
    });
    const lines = (res.stdout + res.stderr).trim().split('\n');
    return { status: res.status, lines, line: JSON.parse(lines[lines.length - 1]) };
  };

  it('a closed port: one fatal line naming DATABASE_URL (password masked), exit 1, before the application loads', async () => {
    const port = await freePort();
    const res = startWith(`postgres://svc:hunter2@127.0.0.1:${port}/svc`);
    expect(res.status).toBe(1);
    expect(res.lines).toHaveLength(1);
    expect(res.line).toMatchObject({ level: 60 });
    expect(res.line.msg).toBe(
      `the database at DATABASE_URL (postgres://svc:***@127.0.0.1:${port}/svc) cannot be reached: connect ECONNREFUSED 127.0.0.1:${port}; ` +
        'fix DATABASE_URL, or unset it to use the embedded PostgreSQL',
    );
  });

  it('a server that never answers: the same line after the 5 s connect timeout, not the system’s TCP timeout', async () => {
    const silent = net.createServer(() => undefined);
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
    try {
      const { port } = silent.address() as net.AddressInfo;
      const res = startWith(`postgres://svc:hunter2@127.0.0.1:${port}/svc`);
      expect(res.status).toBe(1);
      expect(res.line.msg).toContain(`DATABASE_URL (postgres://svc:***@127.0.0.1:${port}/svc) cannot be reached: no answer within 5 s`);
      expect(JSON.stringify(res.lines)).not.toContain('hunter2');
    } finally {
      silent.close();
    }
  });
});

describe('npm start and signals', () => {
  it('a SIGTERM to the process npm start started stops node and its embedded Postgres', async () => {
    const dataDir = tmpDir();
    const npm =
      process.env.npm_execpath && /npm-cli\.js$/.test(process.env.npm_execpath) ? [process.execPath, process.env.npm_execpath] : ['npm'];
    const svc = await startService(
      { SERVICE_DATA_DIR: dataDir, LOG_LEVEL: 'info' },
      { command: [npm[0], ...npm.slice(1), 'start', '--silent'] as [string, ...string[]] },
    );
    let nodePid = 0;
    try {
      const postgresPid = Number(fs.readFileSync(path.join(dataDir, 'db', 'postmaster.pid'), 'utf8').split('\n')[0]);
      nodePid = parentOf(postgresPid);
      expect(fs.readFileSync(`/proc/${nodePid}/cmdline`, 'utf8')).toContain('main.js');
      svc.child.kill('SIGTERM');
      expect(await allGone([svc.child.pid!, nodePid, postgresPid], 20_000)).toBe(true);
      expect(svc.output()).toContain('SIGTERM received, shutting down');
    } finally {
      await svc.crash();
      if (nodePid && alive(nodePid)) process.kill(nodePid, 'SIGTERM'); // left behind when the test fails
    }
  });
});

describe('service log lines', () => {
  it('are JSON lines without Nest console lines, health checks or route mappings; the bound address and the board claim banner come last', async () => {
    const svc = await startService({
      DATABASE_URL: await createTestDatabase(),
      SERVICE_DATA_DIR: tmpDir(),
      SERVICE_DEPLOYMENT_MODE: 'authenticated',
      HOST: '0.0.0.0',
      LOG_LEVEL: 'info',
    });
    try {
      for (let i = 0; i < 3; i++) expect((await svc.api('GET', '/api/health')).status).toBe(200);
      for (const probe of ['/api/health/live', '/api/health/ready', '/api/health/ready?x=1'])
        expect((await svc.api('GET', probe)).status).toBe(200);
      expect((await svc.api('GET', '/api/companies')).status).toBe(401);
      await sleep(300);
    } finally {
      await svc.stop();
    }
    const out = svc.output();
    expect(out).not.toMatch(/\x1b\[/); // no ANSI colours
    const lines = out
      .trim()
      .split('\n')
      .map(
        (l) =>
          JSON.parse(l) as {
            level: number;
            msg: string;
            context?: string;
            claimUrl?: string;
            req?: { url: string; remoteAddress?: string; userAgent?: string };
            res?: Record<string, unknown>;
          },
      );
    expect(lines.filter((l) => /^Mapped \{/.test(l.msg) || l.context === 'InstanceLoader')).toEqual([]);
    expect(lines.filter((l) => l.req?.url.startsWith('/api/health'))).toEqual([]);
    const request = lines.filter((l) => l.req?.url === '/api/companies');
    expect(request).toHaveLength(1);
    // who called and with what; the status without an empty headers object
    expect(request[0].req).toMatchObject({ remoteAddress: '127.0.0.1', userAgent: expect.any(String) });
    expect(request[0].res).toEqual({ statusCode: 401 });
    const listening = lines.findIndex((l) => l.msg.startsWith('listening on'));
    expect(lines[listening].msg).toMatch(/^listening on http:\/\/0\.0\.0\.0:\d+ \(authenticated\)/);
    const claim = lines[listening + 1];
    expect(claim).toMatchObject({ level: 40, context: 'BoardClaim' });
    expect(claim.msg).toMatch(/^BOARD CLAIM: /);
    expect(claim.claimUrl).toMatch(/\/api\/board-claim\/svc_bc_[A-Za-z0-9_-]+\/claim$/);
    expect(lines.filter((l) => l.claimUrl)).toHaveLength(1);
  });
});

describe('npm run migrate', () => {
  it('applies migrations, logs in the service format and writes no key files', async () => {
    const dataDir = tmpDir();
    const built = await ensureBuiltDir();
    const child = spawn(process.execPath, [path.join(built, 'src', 'cli', 'main.js'), 'migrate'], {
      cwd: ROOT,
      env: { ...baseEnv(), DATABASE_URL: await createTestDatabase(), SERVICE_DATA_DIR: dataDir },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    const code = await new Promise<number | null>((r) => child.on('exit', r));
    expect(code).toBe(0);
    const lines = out
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines).toEqual([
      expect.objectContaining({ level: 30, context: 'migrate', msg: 'database is up to date', result: { applied: [] } }),
    ]);
    expect(fs.existsSync(path.join(dataDir, 'keys'))).toBe(false);
  });
});
