import * as fs from 'node:fs';
import * as path from 'node:path';
import { createCompany } from '../support/factories';
import {
  alive,
  insertAgent,
  insertAgentKey,
  probeConfig,
  sleep,
  SLEEP_CONFIG,
  TERMINAL,
  useHeartbeatApp,
  waitFor,
  waitRun,
  probeHostPid,
  wake,
  wakeBody,
  wakeRun,
} from '../support/heartbeat';
import { createTestApp, TestApp } from '../support/test-app';

const SLEEP = SLEEP_CONFIG;
const probe = probeConfig;

describe('heartbeat engine: wakeups and runs', () => {
  const f = useHeartbeatApp();
  let t: TestApp;
  let companyId: string;
  let tmp: string;
  beforeAll(() => {
    ({ t, companyId, tmp } = f);
  });

  describe('POST /api/agents/:agentId/wakeup', () => {
    it('answers 202 with the queued run record, which then runs (the conformance live run)', async () => {
      const agent = await insertAgent(t, companyId, { adapterConfig: SLEEP });
      const res = await wake(t, agent.id).expect(202);
      expect(res.body).toMatchObject({
        id: expect.any(String),
        agentId: agent.id,
        companyId,
        invocationSource: 'on_demand',
        triggerDetail: 'manual',
        wakeupStatus: 'queued',
      });
      expect(['queued', 'running']).toContain(res.body.status);
      await waitFor(async () => (await t.http.get(`/api/heartbeat-runs/${res.body.id}`)).body.status === 'running', 'running');
      const agentRow = (await t.dataSource.query('SELECT status FROM agents WHERE id = $1', [agent.id]))[0];
      expect(agentRow.status).toBe('running');
      await t.http.post(`/api/heartbeat-runs/${res.body.id}/cancel`).expect(200);
    });

    it('answers 404 for an unknown or malformed agent id', async () => {
      await wake(t, '00000000-0000-4000-8000-000000000000').expect(404);
      await wake(t, 'nope').expect(404);
    });

    it.each(['paused', 'terminated', 'pending_approval'])('answers 409 for a %s agent', async (status) => {
      const agent = await insertAgent(t, companyId, { status });
      const res = await wake(t, agent.id).expect(409);
      expect(res.body.code).toBe('agent_not_wakeable');
    });

    it('rejects bad input with 400', async () => {
      const agent = await insertAgent(t, companyId);
      await wake(t, agent.id, { source: 'sometimes' }).expect(400);
      await wake(t, agent.id, { payload: 'x' }).expect(400);
    });

    it('lets an agent wake itself but not another agent (403), nor an agent of another company', async () => {
      const a = await insertAgent(t, companyId);
      const b = await insertAgent(t, companyId);
      const token = await insertAgentKey(t, a);
      await wake(t, b.id, wakeBody(), token).expect(403);
      await wake(t, a.id, wakeBody(), token).expect(202);
      const other = await createCompany(t);
      const c = await insertAgent(t, other.id);
      await wake(t, c.id, wakeBody(), token).expect(404);
    });

    it('skips with 202 { skipped, reason } when on-demand wakes are disabled by policy, and records it', async () => {
      const agent = await insertAgent(t, companyId, { runtimeConfig: { heartbeat: { enabled: false, wakeOnDemand: false } } });
      const res = await wake(t, agent.id).expect(202);
      expect(res.body).toMatchObject({ skipped: true, reason: 'wake_on_demand_disabled' });
      const [w] = await t.dataSource.query('SELECT status, skip_reason FROM agent_wakeup_requests WHERE id = $1', [
        res.body.wakeupRequestId,
      ]);
      expect(w).toEqual({ status: 'skipped', skip_reason: 'wake_on_demand_disabled' });
      const acts = await t.dataSource.query(`SELECT action FROM activity_log WHERE entity_id = $1`, [res.body.wakeupRequestId]);
      expect(acts.map((a: { action: string }) => a.action)).toContain('heartbeat.wakeup_skipped');
    });

    it('skips a wake of an agent over its budget (reason budget)', async () => {
      const agent = await insertAgent(t, companyId, { budgetMonthlyCents: 100, spentMonthlyCents: 100 });
      const res = await wake(t, agent.id).expect(202);
      expect(res.body).toMatchObject({ skipped: true, reason: 'budget' });
    });

    it('replays the same idempotency key within 24 h without a second run', async () => {
      const agent = await insertAgent(t, companyId);
      const first = await wake(t, agent.id, wakeBody({ idempotencyKey: 'k-1' })).expect(202);
      const again = await wake(t, agent.id, wakeBody({ idempotencyKey: 'k-1' })).expect(202);
      expect(again.body.id).toBe(first.body.id);
      expect(again.body.idempotentReplay).toBe(true);
      const other = await wake(t, agent.id, wakeBody({ idempotencyKey: 'k-2' })).expect(202);
      expect(other.body.id).not.toBe(first.body.id);
      const [{ n }] = await t.dataSource.query('SELECT count(*)::int AS n FROM heartbeat_runs WHERE agent_id = $1', [agent.id]);
      expect(n).toBe(2);
    });

    it('gives concurrent requests with one idempotency key one run', async () => {
      const agent = await insertAgent(t, companyId);
      const replies = await Promise.all(Array.from({ length: 5 }, () => wake(t, agent.id, wakeBody({ idempotencyKey: 'same' }))));
      expect(replies.map((r) => r.status)).toEqual([202, 202, 202, 202, 202]);
      expect(new Set(replies.map((r) => r.body.id)).size).toBe(1);
    });
  });

  describe('issue-scoped wakes: coalescing and deferral', () => {
    const issueId = '11111111-1111-4111-8111-111111111111';

    it('defers a wake for an issue with a running run of the agent, then runs it when that run ends', async () => {
      const agent = await insertAgent(t, companyId, { adapterConfig: SLEEP });
      const first = await wakeRun(t, agent.id, wakeBody({ payload: { issueId } }));
      await waitRun(t, first, ['running']);
      const second = await wake(t, agent.id, wakeBody({ payload: { issueId, commentId: 'c-2' } })).expect(202);
      expect(second.body).toMatchObject({ id: first, wakeupStatus: 'deferred' });
      const third = await wake(t, agent.id, wakeBody({ payload: { issueId, commentId: 'c-3' } })).expect(202);
      expect(third.body.wakeupStatus).toBe('deferred');
      const [{ n }] = await t.dataSource.query(
        `SELECT count(*)::int AS n FROM heartbeat_runs WHERE agent_id = $1 AND status IN ('queued','running')`,
        [agent.id],
      );
      expect(n).toBe(1);
      await t.http.post(`/api/heartbeat-runs/${first}/cancel`).expect(200);
      const next = await waitFor(async () => {
        const [r] = await t.dataSource.query(`SELECT * FROM heartbeat_runs WHERE agent_id = $1 AND id <> $2`, [agent.id, first]);
        return r;
      }, 'promoted run');
      expect(next.issue_id).toBe(issueId);
      expect(next.context_snapshot.wakeupRequestIds).toHaveLength(2);
      expect(next.context_snapshot.commentId).toBe('c-3');
      await waitRun(t, next.id, ['running']);
      await t.http.post(`/api/heartbeat-runs/${next.id}/cancel`).expect(200);
    });

    it('coalesces a wake into a queued run of the agent on the same issue', async () => {
      const agent = await insertAgent(t, companyId, { adapterConfig: SLEEP });
      // the agent is busy with another issue, so the issue run stays queued
      const busy = await wakeRun(t, agent.id, wakeBody({ payload: { issueId: '22222222-2222-4222-8222-222222222222' } }));
      await waitRun(t, busy, ['running']);
      const queued = await wakeRun(t, agent.id, wakeBody({ payload: { issueId } }));
      const again = await wake(t, agent.id, wakeBody({ payload: { issueId, commentId: 'c-9' } })).expect(202);
      expect(again.body).toMatchObject({ id: queued, wakeupStatus: 'coalesced', status: 'queued' });
      expect(again.body.contextSnapshot.commentId).toBe('c-9');
      expect(again.body.contextSnapshot.coalesced).toHaveLength(1);
      await t.http.post(`/api/heartbeat-runs/${busy}/cancel`).expect(200);
      await waitRun(t, queued, ['running']);
      await t.http.post(`/api/heartbeat-runs/${queued}/cancel`).expect(200);
    });

    it('suppresses more than N wakes of one agent for one issue in the window (wake_loop_suppressed + activity)', async () => {
      const loop = await createTestApp({ env: { SERVICE_WAKE_LOOP_LIMIT: '3' } });
      try {
        const co = await createCompany(loop);
        const agent = await insertAgent(loop, co.id, { adapterConfig: SLEEP });
        const replies = [];
        for (let i = 0; i < 4; i++) replies.push((await wake(loop, agent.id, wakeBody({ payload: { issueId } })).expect(202)).body);
        expect(replies.slice(0, 3).every((r) => r.id)).toBe(true);
        expect(replies[3]).toMatchObject({ skipped: true, reason: 'wake_loop_suppressed' });
        const acts = await loop.dataSource.query(
          `SELECT action FROM activity_log WHERE action = 'heartbeat.wake_loop_suppressed' AND agent_id = $1`,
          [agent.id],
        );
        expect(acts).toHaveLength(1);
        // another issue is not affected
        await wake(loop, agent.id, wakeBody({ payload: { issueId: '33333333-3333-4333-8333-333333333333' } }))
          .expect(202)
          .expect((r) => expect(r.body.id).toBeDefined());
      } finally {
        await loop.close();
      }
    });

    it('never wakes an agent for its own comment', async () => {
      const agent = await insertAgent(t, companyId);
      const token = await insertAgentKey(t, agent);
      const res = await wake(t, agent.id, wakeBody({ payload: { issueId, commentId: 'own' } }), token).expect(202);
      expect(res.body).toMatchObject({ skipped: true, reason: 'self_comment' });
    });
  });

  describe('process adapter', () => {
    it('injects the SERVICE_* environment, logs stdout/stderr as NDJSON, and succeeds on exit 0', async () => {
      const out = path.join(tmp, 'env-ok.json');
      const agent = await insertAgent(t, companyId, { adapterConfig: { ...probe(out), cwd: tmp, env: { EXTRA: 'inline-value' } } });
      const runId = await wakeRun(
        t,
        agent.id,
        wakeBody({ reason: 'because', payload: { issueId: '44444444-4444-4444-8444-444444444444', commentId: 'cm-1' } }),
      );
      const row = await waitRun(t, runId, ['succeeded', 'failed']);
      expect(row).toMatchObject({ status: 'succeeded', exit_code: 0, error_code: null });
      // the ended run leaves its agent idle (the agents module's statement, through the engine's HeartbeatAgents port)
      expect((await t.http.get(`/api/agents/${agent.id}`).expect(200)).body.status).toBe('idle');
      const seen = JSON.parse(fs.readFileSync(out, 'utf8'));
      expect(fs.realpathSync(seen.cwd)).toBe(fs.realpathSync(tmp));
      expect(seen.env).toMatchObject({
        SERVICE_API_URL: t.baseUrl,
        SERVICE_RUN_ID: runId,
        SERVICE_AGENT_ID: agent.id,
        SERVICE_COMPANY_ID: companyId,
        SERVICE_TASK_ID: '44444444-4444-4444-8444-444444444444',
        SERVICE_WAKE_REASON: 'because',
        SERVICE_WAKE_COMMENT_ID: 'cm-1',
        EXTRA: 'inline-value',
      });
      expect(JSON.parse(seen.env.SERVICE_WAKE_PAYLOAD_JSON)).toEqual({
        issueId: '44444444-4444-4444-8444-444444444444',
        commentId: 'cm-1',
      });
      expect(seen.env.SERVICE_API_KEY).toMatch(/^eyJ/);
      const log = await t.http.get(`/api/heartbeat-runs/${runId}/log`).expect(200);
      const lines = log.body.content
        .trim()
        .split('\n')
        .map((l: string) => JSON.parse(l));
      expect(lines).toEqual(
        expect.arrayContaining([
          expect.objectContaining({ stream: 'stdout', chunk: 'hello from stdout\n' }),
          expect.objectContaining({ stream: 'stderr', chunk: 'hello from stderr\n' }),
        ]),
      );
      expect(log.body.eof).toBe(true);
      const run = await t.http.get(`/api/heartbeat-runs/${runId}`).expect(200);
      expect(run.body.logBytes).toBe(log.body.size);
      // tailing from an offset
      const tail = await t.http.get(`/api/heartbeat-runs/${runId}/log?offset=${log.body.size}`).expect(200);
      expect(tail.body).toMatchObject({ content: '', size: log.body.size, eof: true });
      // an ended run's log read to its end offers no next page (the board UI's "Load more log")
      expect(tail.body).not.toHaveProperty('nextOffset');
      expect(log.body).not.toHaveProperty('nextOffset');
      const partial = await t.http.get(`/api/heartbeat-runs/${runId}/log?limitBytes=10`).expect(200);
      expect(partial.body).toMatchObject({ eof: false, nextOffset: expect.any(Number) });
      const acts = await t.dataSource.query(
        `SELECT action FROM activity_log WHERE run_id = $1 AND entity_type = 'heartbeat_run' ORDER BY created_at`,
        [runId],
      );
      expect(acts.map((a: { action: string }) => a.action)).toEqual([
        'heartbeat.run_queued',
        'heartbeat.run_started',
        'heartbeat.run_succeeded',
      ]);
    });

    it('fails a run that exits non-zero, with the exit code and reason', async () => {
      const agent = await insertAgent(t, companyId, { adapterConfig: probe(path.join(tmp, 'x.json'), '3') });
      const row = await waitRun(t, await wakeRun(t, agent.id), ['succeeded', 'failed']);
      expect(row).toMatchObject({ status: 'failed', exit_code: 3, error_code: 'adapter_exit_nonzero' });
      const [a] = await t.dataSource.query('SELECT status FROM agents WHERE id = $1', [agent.id]);
      expect(a.status).toBe('error');
    });

    it('fails a missing command at once with adapter_command_not_found', async () => {
      const agent = await insertAgent(t, companyId, { adapterConfig: { command: 'definitely-not-a-command-xyz' } });
      const row = await waitRun(t, await wakeRun(t, agent.id), TERMINAL);
      expect(row).toMatchObject({ status: 'failed', error_code: 'adapter_command_not_found' });
    });

    it('times out: SIGTERM to the group, status timed_out', async () => {
      const out = path.join(tmp, 'to.json');
      const agent = await insertAgent(t, companyId, { adapterConfig: { ...probe(out, 'sleep'), timeoutSec: 1, graceSec: 1 } });
      const runId = await wakeRun(t, agent.id);
      const pid = await probeHostPid(out);
      const row = await waitRun(t, runId, TERMINAL, 10000);
      expect(row).toMatchObject({ status: 'timed_out', error_code: 'timeout' });
      await waitFor(async () => !alive(pid), 'process gone', 3000);
    });

    it('kills a process that ignores SIGTERM with SIGKILL after graceSec', async () => {
      const out = path.join(tmp, 'grace.json');
      const agent = await insertAgent(t, companyId, {
        adapterConfig: { ...probe(out, 'sleep', ['ignore-term']), timeoutSec: 1, graceSec: 1 },
      });
      const runId = await wakeRun(t, agent.id);
      // the probe's file can exist before its JSON is complete: wait until it parses
      const pid = await probeHostPid(out);
      await sleep(1500);
      expect(alive(pid)).toBe(true); // SIGTERM ignored, still in grace
      const row = await waitRun(t, runId, TERMINAL, 10000);
      expect(row.status).toBe('timed_out');
      expect(alive(pid)).toBe(false);
      const log = await t.http.get(`/api/heartbeat-runs/${runId}/log`).expect(200);
      expect(log.body.content).toContain('SIGKILL');
    });
  });

  describe('POST /api/heartbeat-runs/:runId/cancel', () => {
    it('cancels a running run and kills its process group within seconds', async () => {
      const out = path.join(tmp, 'cancel.json');
      const agent = await insertAgent(t, companyId, { adapterConfig: probe(out, 'sleep') });
      const runId = await wakeRun(t, agent.id);
      // the probe's file can exist before its JSON is complete: wait until it parses
      const pid = await probeHostPid(out);
      const res = await t.http.post(`/api/heartbeat-runs/${runId}/cancel`).expect(200);
      expect(res.body).toMatchObject({ status: 'cancelled', errorCode: 'cancelled_by_board' });
      await waitFor(async () => !alive(pid), 'process killed', 5000);
      await t.http.post(`/api/heartbeat-runs/${runId}/cancel`).expect(409);
    });

    it("is for the board or the run's own agent (403 for another agent) and 404 for unknown runs", async () => {
      const agent = await insertAgent(t, companyId, { adapterConfig: SLEEP });
      const other = await insertAgent(t, companyId);
      const otherToken = await insertAgentKey(t, other);
      const token = await insertAgentKey(t, agent);
      const runId = await wakeRun(t, agent.id);
      await t.http.post(`/api/heartbeat-runs/${runId}/cancel`).set('Authorization', `Bearer ${otherToken}`).expect(403);
      const own = await t.http.post(`/api/heartbeat-runs/${runId}/cancel`).set('Authorization', `Bearer ${token}`).expect(200);
      expect(own.body).toMatchObject({ status: 'cancelled', errorCode: 'cancelled_by_agent' });
      await t.http.post('/api/heartbeat-runs/00000000-0000-4000-8000-000000000000/cancel').expect(404);
      await t.http.post('/api/heartbeat-runs/bad/cancel').expect(404);
    });
  });

  describe('GET /api/heartbeat-runs', () => {
    it("lists a company's runs with filters and pagination; other companies get 403", async () => {
      const co = await createCompany(t);
      const a = await insertAgent(t, co.id);
      const b = await insertAgent(t, co.id, { adapterConfig: { command: 'false' } });
      const ra = await wakeRun(t, a.id);
      const rb = await wakeRun(t, b.id);
      await waitRun(t, ra, TERMINAL);
      await waitRun(t, rb, TERMINAL);
      const all = await t.http.get(`/api/companies/${co.id}/heartbeat-runs`).expect(200);
      expect(all.body.map((r: { id: string }) => r.id).sort()).toEqual([ra, rb].sort());
      const byAgent = await t.http.get(`/api/companies/${co.id}/heartbeat-runs?agentId=${a.id}`).expect(200);
      expect(byAgent.body.map((r: { id: string }) => r.id)).toEqual([ra]);
      const failed = await t.http.get(`/api/companies/${co.id}/heartbeat-runs?status=failed`).expect(200);
      expect(failed.body.map((r: { id: string }) => r.id)).toEqual([rb]);
      const page = await t.http.get(`/api/companies/${co.id}/heartbeat-runs?limit=1&offset=1`).expect(200);
      expect(page.body).toHaveLength(1);
      await t.http.get(`/api/companies/${co.id}/heartbeat-runs?status=bogus`).expect(400);
      const outsider = await insertAgent(t, companyId);
      const token = await insertAgentKey(t, outsider);
      await t.http.get(`/api/companies/${co.id}/heartbeat-runs`).set('Authorization', `Bearer ${token}`).expect(403);
      await t.http.get(`/api/heartbeat-runs/${ra}`).set('Authorization', `Bearer ${token}`).expect(404);
      await t.http.get(`/api/heartbeat-runs/${ra}/log`).set('Authorization', `Bearer ${token}`).expect(404);
    });

    it('answers 401 without credentials in authenticated mode', async () => {
      const authd = await createTestApp({ env: { SERVICE_DEPLOYMENT_MODE: 'authenticated' } });
      try {
        await authd.http.get('/api/heartbeat-runs/00000000-0000-4000-8000-000000000000').expect(401);
        await authd.http.post('/api/agents/00000000-0000-4000-8000-000000000000/wakeup').send({}).expect(401);
      } finally {
        await authd.close();
      }
    });

    it('GET /api/heartbeat-runs/:runId/issues is an empty array for an unknown run', async () => {
      const res = await t.http.get('/api/heartbeat-runs/00000000-0000-4000-8000-000000000000/issues').expect(200);
      expect(res.body).toEqual([]);
    });

    it('GET /api/issues/:issueId/runs lists runs woken for the issue', async () => {
      const issueId = (await t.http.post(`/api/companies/${companyId}/issues`).send({ title: 'runs view' }).expect(201)).body.id;
      const agent = await insertAgent(t, companyId);
      const runId = await wakeRun(t, agent.id, wakeBody({ payload: { issueId } }));
      const res = await t.http.get(`/api/issues/${issueId}/runs`).expect(200);
      expect(res.body.map((r: { runId: string }) => r.runId)).toContain(runId);
      expect(res.body[0]).toEqual(
        expect.objectContaining({ runId, agentId: agent.id, adapterType: 'process', invocationSource: 'on_demand' }),
      );
    });
  });
});
