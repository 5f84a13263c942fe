import * as fs from 'node:fs';
import * as path from 'node:path';
import { Client } from 'pg';
import { groupAlive } from '../../src/common/process/process-groups';
import { scratchDir, sleep, waitFor } from '../support/heartbeat';
import { ServiceProcess, startService } from '../support/service-process';
import { createTestDatabase } from '../support/test-app';

/**
 * kill -9 of the service mid-run, then a restart on the same data: the process group the dead
 * instance left is killed, exactly one process of the agent runs, and the lost wake is retried once
 * (a second loss is final). The service runs as a real child process (the built dist).
 */
describe('no orphaned agent processes after a crash; lost runs retried once', () => {
  let databaseUrl: string;
  let work: string;
  let dataDir: string;
  let db: Client;
  let svc: ServiceProcess | undefined;
  const REAPER_MS = 300;

  beforeAll(async () => {
    databaseUrl = await createTestDatabase();
    work = scratchDir('crash-work-');
    dataDir = scratchDir('crash-data-');
    db = new Client({ connectionString: databaseUrl });
    await db.connect();
  }, 360_000);
  afterAll(async () => {
    await svc?.stop();
    await db.end();
    fs.rmSync(work, { recursive: true, force: true });
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  const start = () =>
    startService({
      DATABASE_URL: databaseUrl,
      SERVICE_DATA_DIR: dataDir,
      SERVICE_HEARTBEAT_TICK_MS: '200',
      SERVICE_HEARTBEAT_REAPER_MS: String(REAPER_MS),
      SERVICE_HEARTBEAT_KEEPALIVE_MS: '200',
      // agents as the service's own user, the case of a service that is not root: nothing kills the
      // agent's group when the instance dies, so the next start must (as root, agents run in a PID
      // namespace that dies with the instance: agent-identities.e2e-spec)
      SERVICE_AGENT_ISOLATION: 'false',
    });

  const runsOf = async (agentId: string) =>
    (
      await db.query(
        `SELECT id, status, error_code, context_snapshot, process_group_id, process_start_ticks, claimed_by, started_at FROM heartbeat_runs WHERE agent_id = $1 ORDER BY created_at`,
        [agentId],
      )
    ).rows;
  const pidsIn = (file: string) =>
    fs.existsSync(file) ? fs.readFileSync(file, 'utf8').trim().split('\n').filter(Boolean).map(Number) : [];

  it("kills the dead instance's process group, runs exactly one process, and retries the wake once", async () => {
    svc = await start();
    const company = await svc.api('POST', '/api/companies', { name: `Crash Co ${Date.now()}` });
    expect(company.status).toBe(201);
    const pids = path.join(work, 'pids.txt');
    // a leader and a child in one process group; each start appends the leader's pid
    const agent = await svc.api('POST', `/api/companies/${company.body.id}/agents`, {
      name: 'Long runner',
      role: 'general',
      adapterType: 'process',
      adapterConfig: { command: 'sh', args: ['-c', `echo $$ >> ${pids}; sleep 300 & wait`], graceSec: 1 },
    });
    expect(agent.status).toBe(201);
    const agentId = agent.body.id as string;
    const wake = await svc.api('POST', `/api/agents/${agentId}/wakeup`, {
      source: 'on_demand',
      triggerDetail: 'manual',
      reason: 'finish the report',
      payload: { note: 'keep me' },
    });
    expect(wake.status).toBe(202);
    const firstRunId = wake.body.id as string;
    const [pid1] = await waitFor(async () => pidsIn(pids).length === 1 && pidsIn(pids), 'first process');
    await waitFor(async () => (await runsOf(agentId))[0]?.process_group_id === pid1, 'process group recorded');
    await sleep(2100); // older than the launch slack of the orphan check

    await svc.crash();
    expect(groupAlive(pid1)).toBe(true); // what the crash leaves behind: the group, reparented

    svc = await start();
    // killed at start-up (SIGTERM, SIGKILL after graceSec) before the run is finalised; slack for a loaded machine
    await waitFor(async () => !groupAlive(pid1), 'old process group gone', 10_000).catch(async (err) => {
      throw new Error(`${(err as Error).message}\nruns: ${JSON.stringify(await runsOf(agentId))}\nservice output:\n${svc?.output()}`);
    });
    const [, pid2] = await waitFor(async () => pidsIn(pids).length === 2 && pidsIn(pids), 'retried process');
    const runs = await runsOf(agentId);
    expect(runs).toHaveLength(2);
    expect(runs[0]).toMatchObject({ id: firstRunId, status: 'failed', error_code: 'orphaned_run' });
    expect(runs[1]).toMatchObject({ status: 'running' });
    expect(runs[1].context_snapshot).toMatchObject({ reason: 'finish the report', payload: { note: 'keep me' }, retryOfRunId: firstRunId });
    expect(groupAlive(pid2)).toBe(true);
    expect(groupAlive(pid1)).toBe(false); // exactly one process group of the agent
    const retried = await db.query(`SELECT details FROM activity_log WHERE entity_id = $1 AND action = 'heartbeat.run_retried'`, [
      firstRunId,
    ]);
    expect(retried.rows).toHaveLength(1);
    await waitFor(async () => (await runsOf(agentId))[1]?.process_group_id === pid2, 'retried process group recorded');
    await sleep(2100);

    // a second loss of the retried wake is final
    await svc.crash();
    svc = await start();
    await waitFor(async () => !groupAlive(pid2), 'second process group gone', 10_000).catch(async (err) => {
      throw new Error(`${(err as Error).message}\nruns: ${JSON.stringify(await runsOf(agentId))}\nservice output:\n${svc?.output()}`);
    });
    await waitFor(async () => (await runsOf(agentId))[1]?.status === 'failed', 'retried run failed');
    await sleep(REAPER_MS * 3);
    const after = await runsOf(agentId);
    expect(after).toHaveLength(2);
    expect(after[1]).toMatchObject({ status: 'failed', error_code: 'orphaned_run' });
    expect(pidsIn(pids)).toHaveLength(2);
  }, 120_000);
});
