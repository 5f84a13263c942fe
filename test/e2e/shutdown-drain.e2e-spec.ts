import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { spawnSync } from 'node:child_process';
import { Client } from 'pg';
import { RunDispatcher } from '../../src/modules/heartbeat/run-dispatcher.service';
import { createCompany } from '../support/factories';
import { alive, hostPidOf, insertAgent, probeConfig, probeHostPid, runRow, scratchDir, waitFor, wakeRun } from '../support/heartbeat';
import { ensureBuilt, ServiceProcess, startService } from '../support/service-process';
import { sqlRun } from '../support/sql';
import { createTestApp, createTestDatabase, type TestApp } from '../support/test-app';

jest.setTimeout(180_000);

const tmpDir = (prefix: string) => fs.mkdtempSync(path.join(os.tmpdir(), prefix));

describe('graceful drain on SIGTERM (SERVICE_SHUTDOWN_GRACE_SEC)', () => {
  let databaseUrl: string;
  let dataDir: string;
  let db: Client;
  let svc: ServiceProcess | undefined;
  beforeAll(async () => {
    databaseUrl = await createTestDatabase();
    dataDir = tmpDir('drain-');
    db = new Client({ connectionString: databaseUrl });
    await db.connect();
  });
  afterAll(async () => {
    await svc?.stop();
    await db.end();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  const start = (grace: string) =>
    startService({
      DATABASE_URL: databaseUrl,
      SERVICE_DATA_DIR: dataDir,
      SERVICE_SHUTDOWN_GRACE_SEC: grace,
      SERVICE_HEARTBEAT_TICK_MS: '200',
      LOG_LEVEL: 'info',
    });

  async function agentRunning(s: ServiceProcess, script: string): Promise<{ agentId: string; runId: string }> {
    const company = await s.api('POST', '/api/companies', { name: `Drain Co ${Date.now()}` });
    const agent = await s.api('POST', `/api/companies/${company.body.id}/agents`, {
      name: 'Worker',
      role: 'general',
      adapterType: 'process',
      adapterConfig: { command: 'sh', args: ['-c', script], graceSec: 1 },
    });
    expect(agent.status).toBe(201);
    const wake = await s.api('POST', `/api/agents/${agent.body.id}/wakeup`, {
      source: 'on_demand',
      triggerDetail: 'manual',
      reason: 'maintenance test',
    });
    await waitFor(async () => (await s.api('GET', `/api/heartbeat-runs/${wake.body.id}`)).body.status === 'running', 'run running');
    return { agentId: agent.body.id, runId: wake.body.id };
  }
  const runsOf = async (agentId: string) =>
    (await db.query(`SELECT id, status, error_code FROM heartbeat_runs WHERE agent_id = $1 ORDER BY created_at`, [agentId])).rows;
  const retryWakes = async (runId: string) =>
    Number((await db.query(`SELECT count(*)::int AS n FROM agent_wakeup_requests WHERE retry_of_run_id = $1`, [runId])).rows[0].n);

  it('a SIGTERM lets a live run finish (succeeded), and the next start does not run it again', async () => {
    svc = await start('30');
    const { agentId, runId } = await agentRunning(svc, 'sleep 2; echo finished');
    await svc.stop(); // SIGTERM; the harness would SIGKILL after 15 s
    expect(svc.child.exitCode).toBe(0);
    expect(svc.output()).toMatch(/draining: no new runs are claimed; waiting up to 30 s for 1 live runs/);
    expect(svc.output()).toContain('drained: every live run finished');
    expect(await runsOf(agentId)).toEqual([{ id: runId, status: 'succeeded', error_code: null }]);
    svc = await start('30');
    // the restarted instance has booted (orphan reaping, retries): still the one finished run, no retry queued
    expect(await runsOf(agentId)).toEqual([{ id: runId, status: 'succeeded', error_code: null }]);
    expect(await retryWakes(runId)).toBe(0);
    await svc.stop();
  });

  it('a run still going when the grace time is over is handed back as before (instance_shutdown, retried once)', async () => {
    svc = await start('1');
    const { agentId, runId } = await agentRunning(svc, 'sleep 60');
    await svc.stop();
    expect(svc.output()).toMatch(/drain ended with 1 runs still running/);
    const runs = await runsOf(agentId);
    expect(runs[0]).toEqual({ id: runId, status: 'failed', error_code: 'instance_shutdown' });
    expect(await retryWakes(runId)).toBe(1);
  });
});

describe('start-up checks', () => {
  let mainJs: string;
  beforeAll(async () => {
    mainJs = await ensureBuilt();
  });

  it('a port in use is one fatal line before anything is initialised (no database cluster created)', async () => {
    const blocker = net.createServer();
    await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', () => r()));
    const port = (blocker.address() as net.AddressInfo).port;
    const dataDir = tmpDir('port-');
    try {
      const res = spawnSync(process.execPath, [mainJs], {
        env: { PATH: process.env.PATH, HOME: process.env.HOME, PORT: String(port), HOST: '127.0.0.1', SERVICE_DATA_DIR: dataDir },
        encoding: 'utf8',
        timeout: 30_000,
      });
      expect(res.status).toBe(1);
      const lines = (res.stdout + res.stderr)
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l));
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatchObject({ level: 60, context: 'Bootstrap' });
      expect(lines[0].msg).toBe(`port ${port} on 127.0.0.1 is already in use (another instance?); set PORT`);
      expect(fs.existsSync(path.join(dataDir, 'db'))).toBe(false);
    } finally {
      blocker.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('warns at start when stored secrets were encrypted with another master key', async () => {
    const databaseUrl = await createTestDatabase();
    const dataDir = tmpDir('keys-');
    const first = await startService({ DATABASE_URL: databaseUrl, SERVICE_DATA_DIR: dataDir, SERVICE_SECRETS_MASTER_KEY: 'a'.repeat(64) });
    const company = await first.api('POST', '/api/companies', { name: `Keys Co ${Date.now()}` });
    expect(
      (await first.api('POST', `/api/companies/${company.body.id}/secrets`, { name: 'TOKEN', value: 'kept-secret-value' })).status,
    ).toBe(201);
    expect(first.output()).not.toMatch(/cannot be decrypted/);
    await first.stop();
    const second = await startService({ DATABASE_URL: databaseUrl, SERVICE_DATA_DIR: dataDir, SERVICE_SECRETS_MASTER_KEY: 'b'.repeat(64) });
    try {
      await waitFor(async () => /cannot be decrypted/.test(second.output()), 'key warning');
      const line = second
        .output()
        .trim()
        .split('\n')
        // log lines only (a library may print plain text, e.g. the cron package's missed-tick warning)
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l))
        .find((l) => /cannot be decrypted/.test(l.msg));
      expect(line).toMatchObject({ level: 40, context: 'Secrets', secretVersions: 1 });
      expect(line.keyFingerprints).toHaveLength(1);
      expect(line.keyFingerprints[0]).not.toBe(line.configuredKeyFingerprint);
      expect(second.output()).not.toContain('kept-secret-value');
      expect(second.output()).not.toContain('b'.repeat(64));
    } finally {
      await second.stop();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

describe('shutting down while a claim is in flight', () => {
  it('hands back a run claimed as the instance shuts down, and starts no process for it', async () => {
    // instance A holds the data; instance B boots, and its start-up claim waits on the run row
    const a = await createTestApp();
    // A's own start-up dispatch pass must be over before the run exists, or A may claim it first
    const aDispatcher = a.app.get(RunDispatcher);
    await waitFor(async () => aDispatcher['dispatching'] === null, "A's start-up dispatch pass");
    const dir = scratchDir('late-claim-');
    const lock = new Client({ connectionString: a.databaseUrl });
    await lock.connect();
    let b: TestApp | undefined;
    let closing: Promise<void> | undefined;
    try {
      const co = await createCompany(a);
      const marker = path.join(dir, 'late.json');
      const agent = await insertAgent(a, co.id, { adapterConfig: { ...probeConfig(marker, 'sleep'), timeoutSec: 300 } });
      // queued by hand: no wake, so nothing on A claims it
      const runId = await sqlRun(a, co.id, agent.id, { status: 'queued' });
      await a.dataSource.query(`UPDATE heartbeat_runs SET started_at = NULL WHERE id = $1`, [runId]);
      await lock.query('BEGIN');
      const held = await lock.query(`SELECT 1 FROM heartbeat_runs WHERE id = $1 AND status = 'queued' FOR UPDATE`, [runId]);
      expect(held.rowCount).toBe(1); // still queued: nothing claimed it before the lock

      b = await createTestApp({ databaseUrl: a.databaseUrl });
      // watched from outside the lock's transaction: inside it pg_stat_activity is a snapshot taken at its first read
      await waitFor(async () => {
        const rows: Array<{ n: number }> = await a.dataSource.query(
          `SELECT count(*)::int AS n FROM pg_stat_activity
            WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE '%UPDATE heartbeat_runs%'`,
        );
        return rows[0].n > 0;
      }, "B's claim waiting on the run row").catch(async (err) => {
        // what every backend of the database was doing, to tell a claim that never came from one that waited elsewhere
        const rows = await a.dataSource.query(
          `SELECT pid, state, wait_event_type, wait_event, left(regexp_replace(query, '\\s+', ' ', 'g'), 160) AS query
             FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() AND state <> 'idle'`,
        );
        const d = b!.app.get(RunDispatcher);
        throw new Error(`${(err as Error).message}; B dispatching=${d['dispatching'] !== null}; backends ${JSON.stringify(rows)}`);
      });
      const dispatcher = b.app.get(RunDispatcher);
      closing = b.close();
      await waitFor(async () => dispatcher['stopping'], 'B shutting down');
      await lock.query('COMMIT');
      await closing;

      // the claim committed after the shutdown began: handed back like the runs B was executing
      expect(await runRow(a, runId)).toMatchObject({ status: 'failed', error_code: 'instance_shutdown' });
      expect(hostPidOf(marker)).toBeNull();
      expect(fs.existsSync(marker)).toBe(false);
    } finally {
      await lock.end();
      await (closing ?? b?.close());
      await a.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('closing the instance while a run is in its grace period', () => {
  it('kills an agent process that ignores SIGTERM before the shutdown ends, whatever its graceSec', async () => {
    const t = await createTestApp();
    const dir = scratchDir('close-grace-');
    let closed = false;
    try {
      const co = await createCompany(t);
      const out = path.join(dir, 'stubborn.json');
      const agent = await insertAgent(t, co.id, {
        adapterConfig: { ...probeConfig(out, 'sleep', ['ignore-term']), timeoutSec: 300, graceSec: 120 },
      });
      const runId = await wakeRun(t, agent.id);
      const pid = await probeHostPid(out);
      await waitFor(async () => (await runRow(t, runId)).status === 'running', 'run running');
      const began = Date.now();
      await t.close();
      closed = true;
      // SIGTERM (ignored), 2 s, then SIGKILL: gone when close() returns, long before its 120 s grace
      expect(alive(pid)).toBe(false);
      expect(Date.now() - began).toBeLessThan(60_000);
      const rows = await (async () => {
        const c = new Client({ connectionString: t.databaseUrl });
        await c.connect();
        try {
          return (await c.query(`SELECT status, error_code FROM heartbeat_runs WHERE id = $1`, [runId])).rows;
        } finally {
          await c.end();
        }
      })();
      expect(rows).toEqual([{ status: 'failed', error_code: 'instance_shutdown' }]);
    } finally {
      if (!closed) await t.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
