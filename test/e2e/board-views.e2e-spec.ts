import { bearer, createCompany } from '../support/factories';
import { createIssue, IssueRecord } from '../support/issues';
import { insertAgent, insertAgentKey, SLEEP_CONFIG, useHeartbeatApp, waitFor, wakeRun } from '../support/heartbeat';
import { sqlRun } from '../support/sql';
import type { TestApp } from '../support/test-app';

/** The board UI's dashboard and run views, and the small routes it calls (settings, announcement, agent-action audit). */
describe('board views', () => {
  const f = useHeartbeatApp();
  let t: TestApp;
  beforeAll(() => {
    t = f.t;
  });

  const daysAgo = (n: number) => new Date(Date.now() - n * 86_400_000);
  const outsiderToken = async () => {
    const other = await createCompany(t);
    return insertAgentKey(t, await insertAgent(t, other.id));
  };

  describe('GET /api/companies/:companyId/dashboard', () => {
    it('counts agents, tasks, spend, approvals and 14 days of run activity', async () => {
      const co = await createCompany(t);
      await t.http.patch(`/api/companies/${co.id}/budgets`).send({ budgetMonthlyCents: 1000 }).expect(200);
      const idle = await insertAgent(t, co.id);
      await insertAgent(t, co.id, { status: 'paused' });
      await insertAgent(t, co.id, { status: 'error' });
      await insertAgent(t, co.id, { status: 'running' });
      await createIssue(t, co.id, { status: 'todo' });
      await createIssue(t, co.id, { status: 'in_progress' });
      await createIssue(t, co.id, { status: 'blocked' });
      await createIssue(t, co.id, { status: 'done' });
      await createIssue(t, co.id, { status: 'cancelled' });
      const hidden = await createIssue(t, co.id, { status: 'todo' });
      await t.http.patch(`/api/issues/${hidden.id}`).send({ hiddenAt: new Date().toISOString() }).expect(200);
      await t.dataSource.query(`UPDATE companies SET spent_monthly_cents = 250 WHERE id = $1`, [co.id]);
      const run = (status: string, createdAt: Date, errorCode: string | null = null) =>
        sqlRun(t, co.id, idle.id, { status, createdAt }).then((id) =>
          t.dataSource.query(`UPDATE heartbeat_runs SET error_code = $2 WHERE id = $1`, [id, errorCode]),
        );
      await run('succeeded', daysAgo(0));
      await run('failed', daysAgo(0), 'adapter_exit_nonzero');
      await run('timed_out', daysAgo(0), 'timeout');
      await run('queued', daysAgo(0));
      await run('succeeded', daysAgo(3));
      await run('cancelled', daysAgo(13));
      await run('succeeded', daysAgo(20)); // outside the window

      const res = await t.http.get(`/api/companies/${co.id}/dashboard`).expect(200);
      expect(res.body).toMatchObject({
        companyId: co.id,
        agents: { active: 1, running: 1, paused: 1, error: 1 },
        tasks: { open: 3, inProgress: 1, blocked: 1, done: 1 },
        costs: { monthSpendCents: 250, monthBudgetCents: 1000, monthUtilizationPercent: 25 },
        pendingApprovals: 0,
        budgets: { activeIncidents: 0, pendingApprovals: 0, pausedAgents: 1, pausedProjects: 0 },
      });
      const days = res.body.runActivity as Array<Record<string, any>>;
      expect(days).toHaveLength(14);
      expect(days[13]).toEqual({
        date: new Date().toISOString().slice(0, 10),
        succeeded: 1,
        failed: 2,
        recovered: 0,
        other: 1,
        total: 4,
        failedByErrorCode: { adapter_exit_nonzero: 1, timeout: 1 },
      });
      expect(days[10]).toMatchObject({ date: daysAgo(3).toISOString().slice(0, 10), succeeded: 1, total: 1 });
      expect(days[0]).toMatchObject({ date: daysAgo(13).toISOString().slice(0, 10), other: 1, total: 1 });
      expect(days.reduce((n, d) => n + d.total, 0)).toBe(6);
      // today's runs are counted on every read (closed days may be reused for a minute)
      await run('succeeded', new Date());
      const again = (await t.http.get(`/api/companies/${co.id}/dashboard`).expect(200)).body.runActivity as Array<Record<string, any>>;
      expect(again[13]).toMatchObject({ succeeded: 2, total: 5 });
    });

    it('answers 403 to an agent of another company, 404 for an unknown company; agents of the company may read it', async () => {
      const co = await createCompany(t);
      await t.http
        .get(`/api/companies/${co.id}/dashboard`)
        .set(bearer(await outsiderToken()))
        .expect(403);
      await t.http.get('/api/companies/00000000-0000-4000-8000-000000000000/dashboard').expect(404);
      const own = await insertAgentKey(t, await insertAgent(t, co.id));
      await t.http.get(`/api/companies/${co.id}/dashboard`).set(bearer(own)).expect(200);
    });
  });

  describe('live runs', () => {
    it('lists queued and running runs with agent name, adapter, trigger and start time; not finished ones', async () => {
      const co = await createCompany(t);
      const agent = await insertAgent(t, co.id, { name: 'Live Probe' });
      const issue = await createIssue(t, co.id);
      const running = await sqlRun(t, co.id, agent.id, { status: 'running', issueId: issue.id, invocationSource: 'assignment' });
      const queued = await sqlRun(t, co.id, agent.id, { status: 'queued' });
      await sqlRun(t, co.id, agent.id, { status: 'succeeded' });
      const res = await t.http.get(`/api/companies/${co.id}/live-runs`).expect(200);
      expect(res.body.map((r: { id: string }) => r.id).sort()).toEqual([running, queued].sort());
      expect(res.body.find((r: { id: string }) => r.id === running)).toMatchObject({
        companyId: co.id,
        agentId: agent.id,
        agentName: 'Live Probe',
        adapterType: 'process',
        status: 'running',
        invocationSource: 'assignment',
        issueId: issue.id,
        startedAt: expect.any(String),
        lastOutputAt: null,
        finishedAt: null,
      });
      const forIssue = await t.http.get(`/api/issues/${issue.identifier}/live-runs`).expect(200);
      expect(forIssue.body.map((r: { id: string }) => r.id)).toEqual([running]);
      await t.http.get(`/api/companies/${co.id}/live-runs?limit=0`).expect(400);
    });

    it('tops up with the most recent ended runs when minCount asks for more than are live', async () => {
      const co = await createCompany(t);
      const agent = await insertAgent(t, co.id);
      const live = await sqlRun(t, co.id, agent.id, { status: 'running' });
      await sqlRun(t, co.id, agent.id, { status: 'failed' });
      const newest = await sqlRun(t, co.id, agent.id, { status: 'succeeded' });
      const two = (await t.http.get(`/api/companies/${co.id}/live-runs?minCount=2`).expect(200)).body as Array<Record<string, any>>;
      expect(two.map((r) => r.id)).toEqual([live, newest]);
      expect(two[1]).toMatchObject({ status: 'succeeded' });
      expect((await t.http.get(`/api/companies/${co.id}/live-runs?minCount=5`).expect(200)).body).toHaveLength(3);
      expect((await t.http.get(`/api/companies/${co.id}/live-runs`).expect(200)).body.map((r: { id: string }) => r.id)).toEqual([live]);
      await t.http.get(`/api/companies/${co.id}/live-runs?minCount=-1`).expect(400);
    });

    it('shows when a live run last wrote output (the keepalive notices the log growing)', async () => {
      const agent = await insertAgent(t, f.companyId, {
        adapterConfig: { command: 'sh', args: ['-c', 'echo started; sleep 60'], timeoutSec: 120 },
      });
      const runId = await wakeRun(t, agent.id);
      try {
        const live = await waitFor(async () => {
          const rows = (await t.http.get(`/api/companies/${f.companyId}/live-runs`).expect(200)).body as Array<Record<string, any>>;
          const r = rows.find((x) => x.id === runId);
          return r?.lastOutputAt ? r : null;
        }, 'lastOutputAt of the live run');
        expect(live.logBytes).toBeGreaterThan(0);
        expect((await t.http.get(`/api/heartbeat-runs/${runId}`).expect(200)).body.lastOutputAt).toEqual(expect.any(String));
      } finally {
        await t.http.post(`/api/heartbeat-runs/${runId}/cancel`);
      }
    });

    it("answers 403 to another company's agent on the company route, 404 on the issue route as for an unknown issue", async () => {
      const co = await createCompany(t);
      const issue = await createIssue(t, co.id);
      const token = await outsiderToken();
      await t.http.get(`/api/companies/${co.id}/live-runs`).set(bearer(token)).expect(403);
      await t.http.get(`/api/issues/${issue.id}/live-runs`).set(bearer(token)).expect(404);
      await t.http.get('/api/issues/00000000-0000-4000-8000-000000000000/live-runs').expect(404);
    });
  });

  describe('GET /api/companies/:companyId/heartbeat-runs (keyset pages)', () => {
    it('walks every run exactly once, newest first, with filters kept across pages', async () => {
      const co = await createCompany(t);
      const a = await insertAgent(t, co.id);
      const b = await insertAgent(t, co.id);
      const same = new Date(Date.now() - 60_000); // ties on created_at are broken by id
      const ids: string[] = [];
      for (let i = 0; i < 7; i++) ids.push(await sqlRun(t, co.id, a.id, { status: 'succeeded', createdAt: i < 3 ? same : daysAgo(i) }));
      await sqlRun(t, co.id, b.id, { status: 'failed' });
      const seen: string[] = [];
      let cursor: string | undefined;
      let pages = 0;
      do {
        const res = await t.http
          .get(`/api/companies/${co.id}/heartbeat-runs`)
          .query({ agentId: a.id, limit: 3, ...(cursor ? { cursor } : {}) })
          .expect(200);
        seen.push(...res.body.map((r: { id: string }) => r.id));
        cursor = res.headers['x-next-cursor'];
        pages++;
      } while (cursor && pages < 10);
      expect(pages).toBe(3);
      expect(seen.sort()).toEqual([...ids].sort());
      const all = (await t.http.get(`/api/companies/${co.id}/heartbeat-runs?limit=200`).expect(200)).body as Array<{ createdAt: string }>;
      expect(all.map((r) => r.createdAt)).toEqual([...all.map((r) => r.createdAt)].sort().reverse());
      const byStatus = await t.http.get(`/api/companies/${co.id}/heartbeat-runs?status=failed`).expect(200);
      expect(byStatus.body).toHaveLength(1);
      expect(byStatus.headers['x-next-cursor']).toBeUndefined();
    });

    it('filters by issue and rejects a forged cursor, or cursor with offset, with 400', async () => {
      const co = await createCompany(t);
      const a = await insertAgent(t, co.id);
      const issue = await createIssue(t, co.id);
      const mine = await sqlRun(t, co.id, a.id, { status: 'succeeded', issueId: issue.id });
      await sqlRun(t, co.id, a.id, { status: 'succeeded' });
      expect(
        (await t.http.get(`/api/companies/${co.id}/heartbeat-runs?issueId=${issue.id}`).expect(200)).body.map((r: { id: string }) => r.id),
      ).toEqual([mine]);
      await t.http.get(`/api/companies/${co.id}/heartbeat-runs?cursor=bm9wZQ`).expect(400);
      await t.http
        .get(
          `/api/companies/${co.id}/heartbeat-runs?cursor=${Buffer.from("x'; drop|00000000-0000-4000-8000-000000000000").toString('base64url')}`,
        )
        .expect(400);
      const first = await t.http.get(`/api/companies/${co.id}/heartbeat-runs?limit=1`).expect(200);
      await t.http.get(`/api/companies/${co.id}/heartbeat-runs?offset=1&cursor=${first.headers['x-next-cursor']}`).expect(400);
      const second = await t.http.get(`/api/companies/${co.id}/heartbeat-runs?limit=1&offset=1`).expect(200);
      const viaCursor = await t.http
        .get(`/api/companies/${co.id}/heartbeat-runs?limit=1&cursor=${first.headers['x-next-cursor']}`)
        .expect(200);
      expect(second.body).toEqual(viaCursor.body);
    });
  });

  describe('POST /api/heartbeat-runs/:runId/cancel', () => {
    it("lets the run's own agent cancel it; another agent of the company gets 403, another company 404", async () => {
      const agent = await insertAgent(t, f.companyId, { adapterConfig: SLEEP_CONFIG });
      const peer = await insertAgent(t, f.companyId);
      const runId = await wakeRun(t, agent.id);
      await t.http
        .post(`/api/heartbeat-runs/${runId}/cancel`)
        .set(bearer(await insertAgentKey(t, peer)))
        .expect(403);
      await t.http
        .post(`/api/heartbeat-runs/${runId}/cancel`)
        .set(bearer(await outsiderToken()))
        .expect(404);
      const res = await t.http
        .post(`/api/heartbeat-runs/${runId}/cancel`)
        .set(bearer(await insertAgentKey(t, agent)))
        .expect(200);
      expect(res.body).toMatchObject({ status: 'cancelled', errorCode: 'cancelled_by_agent' });
    });
  });

  describe('GET /api/heartbeat-runs/:runId/log (offset pages)', () => {
    it('pages through the log by byte offset', async () => {
      const agent = await insertAgent(t, f.companyId, {
        adapterConfig: { command: 'sh', args: ['-c', 'for i in 1 2 3 4 5 6; do echo line-$i; sleep 0.05; done'] },
      });
      const runId = await wakeRun(t, agent.id);
      await waitFor(async () => !['queued', 'running'].includes((await t.http.get(`/api/heartbeat-runs/${runId}`)).body.status), 'run end');
      let offset = 0;
      let text = '';
      for (let i = 0; i < 50; i++) {
        const page = (await t.http.get(`/api/heartbeat-runs/${runId}/log?offset=${offset}&limitBytes=120`).expect(200)).body;
        text += page.content;
        if (page.eof) break;
        expect(page.nextOffset).toBeGreaterThan(offset);
        offset = page.nextOffset;
      }
      for (let i = 1; i <= 6; i++) expect(text).toContain(`line-${i}`);
      await t.http.get(`/api/heartbeat-runs/${runId}/log?offset=-1`).expect(400);
    });
  });

  describe('GET/PATCH /api/instance/settings', () => {
    it('answers both blocks in one object, consistent with the block routes', async () => {
      const res = await t.http.get('/api/instance/settings').expect(200);
      expect(res.body).toEqual({
        general: (await t.http.get('/api/instance/settings/general').expect(200)).body,
        experimental: (await t.http.get('/api/instance/settings/experimental').expect(200)).body,
      });
      const patched = await t.http
        .patch('/api/instance/settings')
        .send({ general: { instanceName: 'Board Views' }, experimental: { builtInAgents: true } })
        .expect(200);
      expect(patched.body.general.instanceName).toBe('Board Views');
      expect(patched.body.experimental.builtInAgents).toBe(true);
      expect((await t.http.get('/api/instance/settings/general').expect(200)).body.instanceName).toBe('Board Views');
      await t.http
        .patch('/api/instance/settings')
        .send({ experimental: { builtInAgents: false } })
        .expect(200);
    });

    it('rejects unknown blocks or fields and nulls with 400, writing nothing; agents get 403', async () => {
      await t.http
        .patch('/api/instance/settings')
        .send({ general: { instanceName: 'Not Written' }, experimental: { nope: true } })
        .expect(400);
      await t.http
        .patch('/api/instance/settings')
        .send({ general: { instanceName: 'Not Written' }, other: {} })
        .expect(400);
      await t.http.patch('/api/instance/settings').send({ general: null }).expect(400);
      await t.http
        .patch('/api/instance/settings')
        .send({ general: { instanceName: null } })
        .expect(400);
      expect((await t.http.get('/api/instance/settings').expect(200)).body.general.instanceName).not.toBe('Not Written');
      const token = await insertAgentKey(t, await insertAgent(t, f.companyId));
      await t.http.get('/api/instance/settings').set(bearer(token)).expect(403);
      await t.http.patch('/api/instance/settings').set(bearer(token)).send({}).expect(403);
    });
  });

  describe('GET /api/announcements/current', () => {
    it('answers the JSON literal null', async () => {
      const res = await t.http.get('/api/announcements/current').expect(200);
      expect(res.headers['content-type']).toMatch(/application\/json/);
      expect(res.text).toBe('null');
    });
  });

  describe('GET /api/companies/:companyId/audit/agent-actions', () => {
    it('lists activity whose actor is an agent, newest first, in cursor pages; hidden issues left out', async () => {
      const co = await createCompany(t);
      const agent = await insertAgent(t, co.id);
      const token = await insertAgentKey(t, agent);
      const issues: IssueRecord[] = [];
      for (let i = 0; i < 4; i++) issues.push(await createIssue(t, co.id, {}, token));
      await createIssue(t, co.id); // a board action: not listed
      await t.http.patch(`/api/issues/${issues[0].id}`).send({ hiddenAt: new Date().toISOString() }).expect(200);
      const seen: Array<Record<string, any>> = [];
      let cursor: string | null = null;
      do {
        const res: { body: { items: Array<Record<string, any>>; nextCursor: string | null } } = await t.http
          .get(`/api/companies/${co.id}/audit/agent-actions`)
          .query({ limit: 2, ...(cursor ? { cursor } : {}) })
          .expect(200);
        expect(res.body).toMatchObject({ accessTier: 'full' });
        seen.push(...res.body.items);
        cursor = res.body.nextCursor;
      } while (cursor);
      expect(seen.every((a) => a.actorType === 'agent' && a.actorId === agent.id)).toBe(true);
      const created = seen.filter((a) => a.action === 'issue.created').map((a) => a.entityId);
      expect(created).toEqual([issues[3].id, issues[2].id, issues[1].id]);
      expect(seen.find((a) => a.entityId === issues[3].id)?.entity).toEqual({
        issue: { id: issues[3].id, identifier: issues[3].identifier, title: expect.any(String), status: expect.any(String) },
        comment: null,
        document: null,
      });
      expect(seen.map((a) => a.createdAt)).toEqual([...seen.map((a) => a.createdAt)].sort().reverse());
      await t.http.get(`/api/companies/${co.id}/audit/agent-actions?cursor=zzz`).expect(400);
      await t.http
        .get(`/api/companies/${co.id}/audit/agent-actions`)
        .set(bearer(await outsiderToken()))
        .expect(403);
    });

    it('filters as the audit page asks: actorScope all, action, entity type and id, agent, run, user, time window', async () => {
      const co = await createCompany(t);
      const agent = await insertAgent(t, co.id);
      const token = await insertAgentKey(t, agent);
      const before = new Date().toISOString();
      const mine = await createIssue(t, co.id, {}, token);
      const boards = await createIssue(t, co.id);
      await t.http.post(`/api/companies/${co.id}/goals`).set(bearer(token)).send({ title: 'a goal' }).expect(201);
      const q = async (query: Record<string, string>) =>
        (await t.http.get(`/api/companies/${co.id}/audit/agent-actions`).query(query).expect(200)).body.items as Array<Record<string, any>>;
      const all = await q({ actorScope: 'all', action: 'issue.created' });
      expect(all.map((a) => a.entityId).sort()).toEqual([mine.id, boards.id].sort());
      expect((await q({ action: 'issue.created' })).map((a) => a.entityId)).toEqual([mine.id]);
      expect((await q({ entityType: 'goal' })).map((a) => a.action)).toEqual(['goal.created']);
      expect((await q({ agentId: agent.id })).every((a) => a.agentId === agent.id)).toBe(true);
      expect(await q({ to: before })).toEqual([]);
      expect((await q({ from: before, actorScope: 'all' })).length).toBeGreaterThanOrEqual(3);
      expect((await q({ entityType: 'issue', entityId: mine.id })).map((a) => a.action)).toEqual(['issue.created']);
      expect((await q({ actorScope: 'all', responsibleUserId: 'local-board', action: 'issue.created' })).map((a) => a.entityId)).toEqual([
        boards.id,
      ]);
      const runId = await sqlRun(t, co.id, agent.id, { status: 'running' });
      const inRun = (
        await t.http
          .post(`/api/companies/${co.id}/issues`)
          .set(bearer(token))
          .set('X-Service-Run-Id', runId)
          .send({ title: 'from a run' })
          .expect(201)
      ).body;
      expect((await q({ runId })).map((a) => a.entityId)).toEqual([inRun.id]);
      await t.http.get(`/api/companies/${co.id}/audit/agent-actions?runId=nope`).expect(400);
      await t.http.get(`/api/companies/${co.id}/audit/agent-actions?actorScope=robots`).expect(400);
      await t.http.get(`/api/companies/${co.id}/audit/agent-actions?from=yesterday`).expect(400);
    });
  });
});
