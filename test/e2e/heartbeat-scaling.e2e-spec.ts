import * as os from 'node:os';
import { WorkCancellation } from '../../src/common/events/work-cancellation.port';
import { Db } from '../../src/database/db.service';
import { createCompany } from '../support/factories';
import {
  FAST_ENGINE_ENV,
  insertAgent,
  runRow,
  sleep,
  SLEEP_CONFIG,
  TERMINAL,
  waitFor,
  waitRun,
  wake,
  wakeBody,
  wakeRun,
} from '../support/heartbeat';
import { createTestApp, TestApp } from '../support/test-app';

const SLEEP = SLEEP_CONFIG;
const ISSUE = (n: number) => `${String(n).padStart(8, '0')}-0000-4000-8000-000000000000`;

async function insertRunningRun(
  t: TestApp,
  agent: { id: string; companyId: string },
  o: { claimedBy: string; leaseSecFromNow: number; issueId?: string },
): Promise<string> {
  const [r] = await t.dataSource.query(
    `INSERT INTO heartbeat_runs (company_id, agent_id, status, invocation_source, adapter_type, issue_id, started_at, claimed_by, lease_expires_at)
     VALUES ($1, $2, 'running', 'on_demand', 'process', $3, now() - interval '1 minute', $4, now() + make_interval(secs => $5)) RETURNING id`,
    [agent.companyId, agent.id, o.issueId ?? null, o.claimedBy, o.leaseSecFromNow],
  );
  return r.id;
}

describe('heartbeat engine: leases, reaper, instances, timers', () => {
  let first: TestApp;
  let second: TestApp;
  let companyId: string;
  beforeAll(async () => {
    first = await createTestApp({ scheduler: true, env: { ...FAST_ENGINE_ENV, SERVICE_INSTANCE_ID: 'instance-one' } });
    second = await createTestApp({
      databaseUrl: first.databaseUrl,
      scheduler: true,
      env: { ...FAST_ENGINE_ENV, SERVICE_INSTANCE_ID: 'instance-two' },
    });
    companyId = (await createCompany(first)).id;
  });
  afterAll(async () => {
    await second.close();
    await first.close();
  });

  describe('lease expiry (a dead instance)', () => {
    it('fails a running run whose lease expired with lease_expired and promotes the deferred wake behind it', async () => {
      const agent = await insertAgent(first, companyId, { adapterConfig: { command: 'true' } });
      const issueId = ISSUE(1);
      const runId = await insertRunningRun(first, agent, { claimedBy: 'dead-instance', leaseSecFromNow: 60, issueId });
      const deferred = await wake(first, agent.id, wakeBody({ payload: { issueId } })).expect(202);
      expect(deferred.body).toMatchObject({ id: runId, wakeupStatus: 'deferred' });
      // the instance stops renewing: its lease runs out
      await first.dataSource.query(`UPDATE heartbeat_runs SET lease_expires_at = now() - interval '1 second' WHERE id = $1`, [runId]);
      const row = await waitRun(first, runId, TERMINAL, 5000);
      expect(row).toMatchObject({ status: 'failed', error_code: 'lease_expired' });
      const next = await waitFor(
        async () => {
          const [r] = await first.dataSource.query(`SELECT * FROM heartbeat_runs WHERE agent_id = $1 AND id <> $2`, [agent.id, runId]);
          return r;
        },
        'promoted run',
        5000,
      );
      expect(next.issue_id).toBe(issueId);
      expect((await waitRun(first, next.id, TERMINAL)).status).toBe('succeeded');
      const acts = await first.dataSource.query(`SELECT action FROM activity_log WHERE run_id = $1`, [runId]);
      expect(acts.map((a: { action: string }) => a.action)).toContain('heartbeat.run_failed');
    });

    it('keeps a run whose owner renews its lease', async () => {
      const agent = await insertAgent(first, companyId, { adapterConfig: SLEEP });
      const runId = await wakeRun(first, agent.id);
      await waitRun(first, runId, ['running']);
      await sleep(600);
      const [r] = await first.dataSource.query(`SELECT status, lease_expires_at > now() AS leased FROM heartbeat_runs WHERE id = $1`, [
        runId,
      ]);
      expect(r).toEqual({ status: 'running', leased: true });
      await first.http.post(`/api/heartbeat-runs/${runId}/cancel`).expect(200);
    });

    it('reaps at start-up the runs of a dead process of this host (orphaned_run)', async () => {
      const agent = await insertAgent(first, companyId);
      const runId = await insertRunningRun(first, agent, { claimedBy: `${os.hostname()}-999999-abcdef`, leaseSecFromNow: 3600 });
      const third = await createTestApp({ databaseUrl: first.databaseUrl });
      try {
        const row = await waitRun(third, runId, TERMINAL, 5000);
        expect(row).toMatchObject({ status: 'failed', error_code: 'orphaned_run' });
      } finally {
        await third.close();
      }
    });
  });

  describe('two instances on one database', () => {
    it('never executes a run twice and keeps each agent within its concurrency limit', async () => {
      const agents = await Promise.all(
        Array.from({ length: 10 }, () => insertAgent(first, companyId, { adapterConfig: { command: 'true' } })),
      );
      const runIds: string[] = [];
      await Promise.all(
        agents.flatMap((a, i) =>
          [0, 1, 2].map(async (k) => {
            const app = (i + k) % 2 ? first : second;
            const res = await wake(app, a.id, wakeBody({ payload: { issueId: ISSUE(100 + k) } })).expect(202);
            runIds.push(res.body.id);
          }),
        ),
      );
      const unique = [...new Set(runIds)];
      expect(unique).toHaveLength(30);
      await waitFor(
        async () => {
          const [{ n }] = await first.dataSource.query(
            `SELECT count(*)::int AS n FROM heartbeat_runs WHERE id = ANY($1) AND status = 'succeeded'`,
            [unique],
          );
          return n === 30;
        },
        'all runs succeeded',
        30000,
      );
      const starts = await first.dataSource.query(
        `SELECT run_id, count(*)::int AS n FROM activity_log WHERE action = 'heartbeat.run_started' AND run_id = ANY($1) GROUP BY run_id`,
        [unique],
      );
      expect(starts).toHaveLength(30);
      expect(starts.every((s: { n: number }) => s.n === 1)).toBe(true);
    });

    it('runs at most maxConcurrentRuns of one agent at a time across instances', async () => {
      const agent = await insertAgent(first, companyId, {
        adapterConfig: SLEEP,
        runtimeConfig: { heartbeat: { enabled: false, maxConcurrentRuns: 2 } },
      });
      const ids = [];
      for (let k = 0; k < 4; k++)
        ids.push((await wake(k % 2 ? first : second, agent.id, wakeBody({ payload: { issueId: ISSUE(200 + k) } })).expect(202)).body.id);
      await waitFor(async () => {
        const [{ n }] = await first.dataSource.query(
          `SELECT count(*)::int AS n FROM heartbeat_runs WHERE agent_id = $1 AND status = 'running'`,
          [agent.id],
        );
        return n === 2;
      }, 'two running');
      await sleep(500);
      const [{ n }] = await first.dataSource.query(
        `SELECT count(*)::int AS n FROM heartbeat_runs WHERE agent_id = $1 AND status = 'running'`,
        [agent.id],
      );
      expect(n).toBe(2);
      for (const id of ids) await first.http.post(`/api/heartbeat-runs/${id}/cancel`);
    });

    it('cancels a run executing on the other instance within seconds', async () => {
      const agent = await insertAgent(first, companyId, { adapterConfig: SLEEP });
      const runId = await wakeRun(first, agent.id);
      const row = await waitRun(first, runId, ['running']);
      const other = row.claimed_by === 'instance-one' ? second : first;
      await other.http.post(`/api/heartbeat-runs/${runId}/cancel`).expect(200);
      // the owner notices at its next keepalive and kills the process: the log says so
      await waitFor(
        async () => {
          const log = await (other === first ? second : first).http.get(`/api/heartbeat-runs/${runId}/log`);
          return String(log.body.content).includes('SIGTERM');
        },
        'owner killed the process',
        5000,
      );
    });
  });

  describe('timers', () => {
    it('fires a timer once per interval across both instances', async () => {
      const agent = await insertAgent(first, companyId, {
        runtimeConfig: { heartbeat: { enabled: true, intervalSec: 1, skipWhenIdle: false } },
      });
      await sleep(3600);
      const wakes = await first.dataSource.query(
        `SELECT created_at FROM agent_wakeup_requests WHERE agent_id = $1 AND source = 'timer' ORDER BY created_at`,
        [agent.id],
      );
      expect(wakes.length).toBeGreaterThanOrEqual(2);
      expect(wakes.length).toBeLessThanOrEqual(4);
      for (let i = 1; i < wakes.length; i++) {
        expect(new Date(wakes[i].created_at).getTime() - new Date(wakes[i - 1].created_at).getTime()).toBeGreaterThanOrEqual(900);
      }
      const runs = await first.dataSource.query(`SELECT invocation_source, trigger_detail FROM heartbeat_runs WHERE agent_id = $1`, [
        agent.id,
      ]);
      expect(runs.length).toBeGreaterThanOrEqual(1);
      expect(runs[0]).toEqual({ invocation_source: 'timer', trigger_detail: 'system' });
    });

    it("one agent whose timer wake fails does not stop other companies' timers (fired one by one, the failure retried next tick)", async () => {
      const otherCompany = (await createCompany(first)).id;
      const timer = { heartbeat: { enabled: true, intervalSec: 1, skipWhenIdle: false } };
      const broken = await insertAgent(first, companyId, { runtimeConfig: timer });
      const healthy = await insertAgent(first, otherCompany, { runtimeConfig: timer });
      // the broken agent's wake request cannot be written (as a constraint or a full disk would refuse it)
      await first.dataSource.query(`
        CREATE FUNCTION test_refuse_timer_wake() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
          IF NEW.agent_id = '${broken.id}' THEN RAISE EXCEPTION 'wake refused for the test'; END IF;
          RETURN NEW;
        END $$;
        CREATE TRIGGER test_refuse_timer_wake BEFORE INSERT ON agent_wakeup_requests FOR EACH ROW EXECUTE FUNCTION test_refuse_timer_wake();`);
      try {
        const wakesOf = async (agentId: string) =>
          (await first.dataSource.query(`SELECT 1 FROM agent_wakeup_requests WHERE agent_id = $1 AND source = 'timer'`, [agentId])).length;
        await waitFor(async () => ((await wakesOf(healthy.id)) >= 2 ? true : null), 'healthy timer wakes', 6000);
        expect(await wakesOf(broken.id)).toBe(0);
        // the broken agent stays due, so it fires once its wakes can be written again
        const [b] = await first.dataSource.query(
          `SELECT heartbeat_next_due_at <= now() + interval '1 second' AS due FROM agents WHERE id = $1`,
          [broken.id],
        );
        expect(b.due).toBe(true);
      } finally {
        await first.dataSource.query(
          `DROP TRIGGER test_refuse_timer_wake ON agent_wakeup_requests; DROP FUNCTION test_refuse_timer_wake();`,
        );
      }
      await waitFor(
        async () =>
          (await first.dataSource.query(`SELECT 1 FROM agent_wakeup_requests WHERE agent_id = $1 AND source = 'timer'`, [broken.id])).length
            ? true
            : null,
        'broken agent fires after the fault',
        6000,
      );
    });

    it('skips an idle timer wake (skipWhenIdle default) and records it; a disabled timer never fires', async () => {
      const idle = await insertAgent(first, companyId, { runtimeConfig: { heartbeat: { enabled: true, intervalSec: 1 } } });
      const off = await insertAgent(first, companyId, { runtimeConfig: { heartbeat: { enabled: false, intervalSec: 1 } } });
      await waitFor(
        async () => {
          const rows = await first.dataSource.query(`SELECT status, skip_reason FROM agent_wakeup_requests WHERE agent_id = $1`, [idle.id]);
          return rows.length > 0 ? rows : null;
        },
        'idle timer wake',
        5000,
      ).then((rows) => expect(rows[0]).toEqual({ status: 'skipped', skip_reason: 'no_actionable_work' }));
      const [{ n }] = await first.dataSource.query(`SELECT count(*)::int AS n FROM heartbeat_runs WHERE agent_id = $1`, [idle.id]);
      expect(n).toBe(0);
      const offWakes = await first.dataSource.query(`SELECT 1 FROM agent_wakeup_requests WHERE agent_id = $1`, [off.id]);
      expect(offWakes).toHaveLength(0);
      const list = await first.http.get('/api/instance/scheduler-heartbeats').expect(200);
      const entry = list.body.find((e: { agentId: string }) => e.agentId === idle.id);
      expect(entry).toMatchObject({ enabled: true, intervalSec: 1, nextDueAt: expect.any(String), lastFiredAt: expect.any(String) });
      expect(list.body.find((e: { agentId: string }) => e.agentId === off.id)).toBeUndefined();
    });
  });

  describe('WorkCancellation (pause, terminate, archive, budget hard stop)', () => {
    it('cancels queued and deferred wakes and kills in-flight runs of the scope', async () => {
      const agent = await insertAgent(first, companyId, { adapterConfig: SLEEP });
      const bystander = await insertAgent(first, companyId, { adapterConfig: SLEEP });
      const runId = await wakeRun(first, agent.id, wakeBody({ payload: { issueId: ISSUE(300) } }));
      const otherRun = await wakeRun(first, bystander.id);
      await waitRun(first, runId, ['running']);
      await waitRun(first, otherRun, ['running']);
      const deferred = await wake(first, agent.id, wakeBody({ payload: { issueId: ISSUE(300) } })).expect(202);
      expect(deferred.body.wakeupStatus).toBe('deferred');
      const db = first.app.get(Db);
      await db.transaction(async () => {
        await db.query(`UPDATE agents SET status = 'paused' WHERE id = $1`, [agent.id]);
        await first.app.get(WorkCancellation).cancel({ companyId, agentIds: [agent.id] }, 'agent_paused');
      });
      const row = await waitRun(first, runId, TERMINAL, 3000);
      expect(row).toMatchObject({ status: 'cancelled', error_code: 'scope_cancelled' });
      const [w] = await first.dataSource.query(`SELECT status FROM agent_wakeup_requests WHERE id = $1`, [
        deferred.body.wakeupRequestIdOfThisWake,
      ]);
      expect(w.status).toBe('cancelled');
      // the log lives on the instance that ran the run (either may have claimed it)
      const owner = (await runRow(first, runId)).claimed_by === 'instance-two' ? second : first;
      await waitFor(
        async () => {
          const log = await owner.http.get(`/api/heartbeat-runs/${runId}/log`);
          return String(log.body.content).includes('SIGTERM');
        },
        'process killed',
        5000,
      );
      await sleep(300);
      const [{ n }] = await first.dataSource.query(
        `SELECT count(*)::int AS n FROM heartbeat_runs WHERE agent_id = $1 AND status IN ('queued','running')`,
        [agent.id],
      );
      expect(n).toBe(0);
      expect((await first.dataSource.query('SELECT status FROM heartbeat_runs WHERE id = $1', [otherRun]))[0].status).toBe('running');
      await first.http.post(`/api/heartbeat-runs/${otherRun}/cancel`).expect(200);
    });
  });
});

describe('heartbeat engine: deleted agents', () => {
  it('kills the process of a run whose agent was deleted', async () => {
    const t = await createTestApp({ env: FAST_ENGINE_ENV });
    try {
      const co = await createCompany(t);
      const agent = await insertAgent(t, co.id, { adapterConfig: SLEEP });
      const runId = await wakeRun(t, agent.id);
      await waitRun(t, runId, ['running']);
      const logFile = (await t.dataSource.query('SELECT log_path FROM heartbeat_runs WHERE id = $1', [runId]))[0].log_path;
      await t.dataSource.query('DELETE FROM agents WHERE id = $1', [agent.id]);
      const fs = await import('node:fs');
      const path = await import('node:path');
      await waitFor(
        async () => {
          try {
            return fs.readFileSync(path.join(t.dataDir, logFile), 'utf8').includes('run deleted');
          } catch {
            return false;
          }
        },
        'process killed',
        5000,
      );
    } finally {
      await t.close();
    }
  });
});
