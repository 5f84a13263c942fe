import { Clock } from '../../src/modules/budgets/clock.service';
import { RunTokenService } from '../../src/modules/heartbeat/run-token.service';
import { bearer, createCompany } from '../support/factories';
import {
  agentRow,
  companyRow,
  costBody,
  insertAgent,
  insertAgentKey,
  insertProject,
  insertRun,
  reportCost,
  unknownId,
} from '../support/costs';
import { createTestApp, TestApp } from '../support/test-app';

describe('costs', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());
  afterEach(() => t.app.get(Clock).set(null));

  describe('POST /api/companies/:companyId/cost-events', () => {
    it('accepts the run token of a run that just ended (a hard stop cancelled it) for cost events only, within the grace period', async () => {
      const c = await createCompany(t);
      const a = await insertAgent(t, c.id);
      const run = await insertRun(t, a, 'running');
      const token = t.app.get(RunTokenService).issue({ agentId: a.id, companyId: c.id, runId: run.id });
      await t.dataSource.query(`UPDATE heartbeat_runs SET status = 'cancelled', finished_at = now() WHERE id = $1`, [run.id]);
      await reportCost(t, c.id, a.id, 70, {}, token).expect(201);
      expect((await agentRow(t, a.id)).spent_monthly_cents).toBe(70);
      // nothing else: the token is no longer live for any other route
      await t.http.get(`/api/agents/${a.id}`).set(bearer(token)).expect(401);
      await t.http.get(`/api/companies/${c.id}/issues`).set(bearer(token)).expect(401);
      // past the grace period (30 s: a short one, issue 41) the cost event is refused too
      await t.dataSource.query(`UPDATE heartbeat_runs SET finished_at = now() - interval '31 seconds' WHERE id = $1`, [run.id]);
      await reportCost(t, c.id, a.id, 5, {}, token).expect(401);
    });

    it('stores an event with the defaults: biller = provider, billingType unknown, costStatus reported (201)', async () => {
      const c = await createCompany(t);
      const a = await insertAgent(t, c.id);
      const res = await reportCost(t, c.id, a.id, 42, { provider: 'prov-a', model: 'm-1' }).expect(201);
      expect(res.body).toMatchObject({
        companyId: c.id,
        agentId: a.id,
        provider: 'prov-a',
        model: 'm-1',
        biller: 'prov-a',
        billingType: 'unknown',
        costStatus: 'reported',
        costCents: 42,
        issueId: null,
        projectId: null,
        inputTokens: null,
      });
    });

    it('stores every optional field of the spec', async () => {
      const c = await createCompany(t);
      const a = await insertAgent(t, c.id);
      const p = await insertProject(t, c.id);
      const [goal] = await t.dataSource.query(`INSERT INTO goals (company_id, title) VALUES ($1, 'G') RETURNING id`, [c.id]);
      const run = await insertRun(t, a);
      // attribution ids must be records of the company (an unknown id is refused like another company's)
      const [{ id: issueId }] = await t.dataSource.query(
        `INSERT INTO issues (company_id, title, identifier, issue_number) VALUES ($1, 'attributed', 'ATT-1', 1) RETURNING id`,
        [c.id],
      );
      const body = costBody(a.id, {
        issueId,
        projectId: p.id,
        goalId: goal.id,
        heartbeatRunId: run.id,
        billingCode: 'team-x',
        biller: 'gateway-y',
        billingType: 'subscription_overage',
        inputTokens: 1000,
        cachedInputTokens: 200,
        outputTokens: 300,
        idempotencyKey: 'k-1',
      });
      const res = await t.http.post(`/api/companies/${c.id}/cost-events`).send(body).expect(201);
      expect(res.body).toMatchObject({
        issueId,
        projectId: p.id,
        goalId: goal.id,
        heartbeatRunId: run.id,
        billingCode: 'team-x',
        biller: 'gateway-y',
        billingType: 'subscription_overage',
        inputTokens: 1000,
        cachedInputTokens: 200,
        outputTokens: 300,
        idempotencyKey: 'k-1',
        occurredAt: body.occurredAt,
      });
    });

    it('records an unpriced event with tokens and null money, not zero', async () => {
      const c = await createCompany(t);
      const a = await insertAgent(t, c.id);
      const body = costBody(a.id, { costStatus: 'unpriced', inputTokens: 500, outputTokens: 50 });
      delete (body as Record<string, unknown>).costCents;
      const res = await t.http.post(`/api/companies/${c.id}/cost-events`).send(body).expect(201);
      expect(res.body).toMatchObject({ costStatus: 'unpriced', costCents: null, inputTokens: 500, outputTokens: 50 });
      const summary = await t.http.get(`/api/companies/${c.id}/costs/summary`).expect(200);
      expect(summary.body).toMatchObject({ spendCents: 0, eventCount: 1, unpricedEventCount: 1, inputTokens: 500 });
      // an unpriced event with money is a contradiction
      await t.http
        .post(`/api/companies/${c.id}/cost-events`)
        .send({ ...body, costCents: 5 })
        .expect(422);
    });

    it('rejects a missing required field with 400 and stores nothing', async () => {
      const c = await createCompany(t);
      const a = await insertAgent(t, c.id);
      for (const field of ['agentId', 'provider', 'model', 'costCents', 'occurredAt']) {
        const body: Record<string, unknown> = costBody(a.id);
        delete body[field];
        const res = await t.http.post(`/api/companies/${c.id}/cost-events`).send(body).expect(400);
        expect(res.body.code).toBe('validation_failed');
      }
      expect((await agentRow(t, a.id)).spent_monthly_cents).toBe(0);
    });

    it('rejects bad values with 400', async () => {
      const c = await createCompany(t);
      const a = await insertAgent(t, c.id);
      const bad: Array<Record<string, unknown>> = [
        { costCents: 1.5 },
        { costCents: -1 },
        { costCents: '10' },
        { occurredAt: 'yesterday' },
        { billingType: 'gift' },
        { costStatus: 'free' },
        { inputTokens: -3 },
        { agentId: 'not-a-uuid' },
        { projectId: 'x' },
        { provider: '' },
      ];
      for (const extra of bad) await t.http.post(`/api/companies/${c.id}/cost-events`).send(costBody(a.id, extra)).expect(400);
    });

    it('rejects an agent of another company, or a project, goal or run of another company, with 422', async () => {
      const c = await createCompany(t);
      const other = await createCompany(t);
      const a = await insertAgent(t, c.id);
      const foreign = await insertAgent(t, other.id);
      const res = await reportCost(t, c.id, foreign.id, 10).expect(422);
      expect(res.body).toMatchObject({ code: 'invalid_reference', field: 'agentId' });
      await reportCost(t, c.id, unknownId(), 10).expect(422);
      const foreignProject = await insertProject(t, other.id);
      const field = async (extra: Record<string, unknown>) => (await reportCost(t, c.id, a.id, 10, extra).expect(422)).body.field;
      expect(await field({ projectId: foreignProject.id })).toBe('projectId');
      expect(await field({ goalId: unknownId() })).toBe('goalId');
      const foreignRun = await insertRun(t, foreign);
      expect(await field({ heartbeatRunId: foreignRun.id })).toBe('heartbeatRunId');
      // a run of another agent of the same company: the company check passes, the agent check does not
      const colleague = await insertAgent(t, c.id);
      const colleaguesRun = await insertRun(t, colleague);
      const wrongRun = await reportCost(t, c.id, a.id, 10, { heartbeatRunId: colleaguesRun.id }).expect(422);
      expect(wrongRun.body).toMatchObject({ code: 'invalid_reference', field: 'heartbeatRunId' });
      // one bad reference among good ones is still found
      const ownProject = await insertProject(t, c.id);
      const ownRun = await insertRun(t, a);
      expect(await field({ projectId: ownProject.id, heartbeatRunId: ownRun.id, goalId: unknownId() })).toBe('goalId');
      const s = await t.http.get(`/api/companies/${c.id}/costs/summary`).expect(200);
      expect(s.body.spendCents).toBe(0);
      // the insert travels with the reference check; the failed request's transaction dropped it
      const [stored] = await t.dataSource.query(`SELECT count(*)::int AS n FROM cost_events WHERE company_id = $1`, [c.id]);
      expect(stored.n).toBe(0);
    });

    it('404 for an unknown company', async () => {
      await reportCost(t, unknownId(), unknownId(), 10).expect(404);
    });

    it('lets an agent report its own costs only (403 for a peer, 403 in another company)', async () => {
      const c = await createCompany(t);
      const self = await insertAgent(t, c.id);
      const peer = await insertAgent(t, c.id);
      const token = await insertAgentKey(t, self);
      const own = await reportCost(t, c.id, self.id, 7, {}, token).expect(201);
      const [event] = await t.dataSource.query(`SELECT reported_by_actor_type, reported_by_actor_id FROM cost_events WHERE id = $1`, [
        own.body.id,
      ]);
      expect(event).toEqual({ reported_by_actor_type: 'agent', reported_by_actor_id: self.id });
      await reportCost(t, c.id, peer.id, 7, {}, token).expect(403);
      const other = await createCompany(t);
      const otherAgent = await insertAgent(t, other.id);
      await reportCost(t, other.id, otherAgent.id, 7, {}, token).expect(403);
      expect((await agentRow(t, peer.id)).spent_monthly_cents).toBe(0);
      expect((await agentRow(t, self.id)).spent_monthly_cents).toBe(7);
    });

    it('attributes an agent report made in a verified run to that run', async () => {
      const c = await createCompany(t);
      const a = await insertAgent(t, c.id, { status: 'running' });
      const token = await insertAgentKey(t, a);
      const run = await insertRun(t, a);
      const res = await reportCost(t, c.id, a.id, 3, {}, token).set('X-Service-Run-Id', run.id).expect(201);
      expect(res.body.heartbeatRunId).toBe(run.id);
    });

    it('recalculates spentMonthlyCents of the agent and of the company', async () => {
      const c = await createCompany(t);
      const a = await insertAgent(t, c.id);
      const b = await insertAgent(t, c.id);
      await reportCost(t, c.id, a.id, 120).expect(201);
      await reportCost(t, c.id, a.id, 30).expect(201);
      await reportCost(t, c.id, b.id, 50).expect(201);
      expect((await agentRow(t, a.id)).spent_monthly_cents).toBe(150);
      expect((await agentRow(t, b.id)).spent_monthly_cents).toBe(50);
      expect((await companyRow(t, c.id)).spent_monthly_cents).toBe(200);
    });

    it('counts an event of a past UTC month in reports but not in spentMonthlyCents', async () => {
      const c = await createCompany(t);
      const a = await insertAgent(t, c.id);
      t.app.get(Clock).set('2026-03-15T12:00:00.000Z');
      await reportCost(t, c.id, a.id, 40, { occurredAt: '2026-03-02T00:00:00.000Z' }).expect(201);
      await reportCost(t, c.id, a.id, 99, { occurredAt: '2026-02-28T23:59:59.999Z' }).expect(201);
      expect((await agentRow(t, a.id)).spent_monthly_cents).toBe(40);
      expect((await companyRow(t, c.id)).spent_monthly_cents).toBe(40);
      const s = await t.http.get(`/api/companies/${c.id}/costs/summary`).expect(200);
      expect(s.body.spendCents).toBe(139);
      // the first event of a new month starts spentMonthlyCents afresh
      t.app.get(Clock).set('2026-04-01T00:10:00.000Z');
      await reportCost(t, c.id, a.id, 5, { occurredAt: '2026-04-01T00:05:00.000Z' }).expect(201);
      expect((await agentRow(t, a.id)).spent_monthly_cents).toBe(5);
      expect((await companyRow(t, c.id)).spent_monthly_cents).toBe(5);
    });

    it('writes a cost.reported activity record in the same transaction', async () => {
      const c = await createCompany(t);
      const a = await insertAgent(t, c.id);
      const res = await reportCost(t, c.id, a.id, 5).expect(201);
      const feed = await t.http.get(`/api/companies/${c.id}/activity?entityType=cost_event`).expect(200);
      expect(feed.body).toHaveLength(1);
      expect(feed.body[0]).toMatchObject({ action: 'cost.reported', entityId: res.body.id, agentId: a.id });
    });

    describe('idempotency', () => {
      it('returns the original with 200 for a repeated idempotencyKey and counts it once', async () => {
        const c = await createCompany(t);
        const a = await insertAgent(t, c.id);
        const first = await reportCost(t, c.id, a.id, 25, { idempotencyKey: 'same' }).expect(201);
        const again = await reportCost(t, c.id, a.id, 25, { idempotencyKey: 'same' }).expect(200);
        expect(again.body).toEqual(first.body);
        expect((await agentRow(t, a.id)).spent_monthly_cents).toBe(25);
        const activity = await t.dataSource.query(`SELECT 1 FROM activity_log WHERE company_id = $1 AND action = 'cost.reported'`, [c.id]);
        expect(activity).toHaveLength(1);
      });

      it('refuses a key reused for another agent with 409', async () => {
        const c = await createCompany(t);
        const a = await insertAgent(t, c.id);
        const b = await insertAgent(t, c.id);
        await reportCost(t, c.id, a.id, 25, { idempotencyKey: 'k' }).expect(201);
        const res = await reportCost(t, c.id, b.id, 25, { idempotencyKey: 'k' }).expect(409);
        expect(res.body.code).toBe('idempotency_key_reused');
      });

      it('treats (heartbeatRunId, provider, model, occurredAt) as one event', async () => {
        const c = await createCompany(t);
        const a = await insertAgent(t, c.id);
        const run = await insertRun(t, a);
        const at = new Date().toISOString();
        const first = await reportCost(t, c.id, a.id, 10, { heartbeatRunId: run.id, occurredAt: at }).expect(201);
        const dup = await reportCost(t, c.id, a.id, 10, { heartbeatRunId: run.id, occurredAt: at }).expect(200);
        expect(dup.body.id).toBe(first.body.id);
        await reportCost(t, c.id, a.id, 10, { heartbeatRunId: run.id, occurredAt: at, model: 'other' }).expect(201);
        expect((await agentRow(t, a.id)).spent_monthly_cents).toBe(20);
      });

      it('counts 20 concurrent repeats of one key exactly once', async () => {
        const c = await createCompany(t);
        const a = await insertAgent(t, c.id);
        const results = await Promise.all(Array.from({ length: 20 }, () => reportCost(t, c.id, a.id, 10, { idempotencyKey: 'race' })));
        expect(results.filter((r) => r.status === 201)).toHaveLength(1);
        expect(results.filter((r) => r.status === 200)).toHaveLength(19);
        expect(new Set(results.map((r) => r.body.id)).size).toBe(1);
        expect((await agentRow(t, a.id)).spent_monthly_cents).toBe(10);
        expect((await companyRow(t, c.id)).spent_monthly_cents).toBe(10);
      });
    });
  });

  describe('GET /api/companies/:companyId/costs/*', () => {
    it('summary reports spendCents, budgetCents and utilizationPercent, filtered by from/to', async () => {
      const c = await createCompany(t, { budgetMonthlyCents: 1000 });
      const a = await insertAgent(t, c.id);
      await reportCost(t, c.id, a.id, 250, { occurredAt: '2026-01-10T10:00:00.000Z' }).expect(201);
      await reportCost(t, c.id, a.id, 50, { occurredAt: '2026-01-20T10:00:00.000Z' }).expect(201);
      const all = await t.http.get(`/api/companies/${c.id}/costs/summary`).expect(200);
      expect(all.body).toMatchObject({ spendCents: 300, budgetCents: 1000, utilizationPercent: 30, from: null, to: null, eventCount: 2 });
      const q = (from: string, to: string) => t.http.get(`/api/companies/${c.id}/costs/summary`).query({ from, to }).expect(200);
      expect((await q('2000-01-01T00:00:00.000Z', '2000-02-01T00:00:00.000Z')).body.spendCents).toBe(0);
      expect((await q('2026-01-10T10:00:00.000Z', '2026-01-20T10:00:00.000Z')).body.spendCents).toBe(250); // to is exclusive
      const onlyFrom = await t.http.get(`/api/companies/${c.id}/costs/summary`).query({ from: '2026-01-15T00:00:00Z' }).expect(200);
      expect(onlyFrom.body.spendCents).toBe(50);
    });

    it('summary without a budget reports utilization 0', async () => {
      const c = await createCompany(t);
      const a = await insertAgent(t, c.id);
      await reportCost(t, c.id, a.id, 10).expect(201);
      const s = await t.http.get(`/api/companies/${c.id}/costs/summary`).expect(200);
      expect(s.body).toMatchObject({ spendCents: 10, budgetCents: 0, utilizationPercent: 0 });
    });

    it('rejects malformed or inverted from/to with 400', async () => {
      const c = await createCompany(t);
      await t.http.get(`/api/companies/${c.id}/costs/summary`).query({ from: 'soon' }).expect(400);
      await t.http
        .get(`/api/companies/${c.id}/costs/by-agent`)
        .query({ from: '2026-02-01T00:00:00Z', to: '2026-01-01T00:00:00Z' })
        .expect(400);
    });

    it('breaks spend down by agent, agent+model, provider, biller and project with token sums', async () => {
      const c = await createCompany(t);
      const a = await insertAgent(t, c.id, { name: 'Alpha' });
      const b = await insertAgent(t, c.id, { name: 'Beta' });
      const p = await insertProject(t, c.id);
      const at = '2026-05-05T05:00:00.000Z';
      await reportCost(t, c.id, a.id, 100, {
        provider: 'p1',
        model: 'm1',
        biller: 'gw',
        inputTokens: 10,
        outputTokens: 1,
        projectId: p.id,
        occurredAt: at,
      }).expect(201);
      await reportCost(t, c.id, a.id, 50, { provider: 'p2', model: 'm2', inputTokens: 5, occurredAt: at }).expect(201);
      await reportCost(t, c.id, b.id, 30, { provider: 'p1', model: 'm1', cachedInputTokens: 7, occurredAt: at }).expect(201);
      const base = `/api/companies/${c.id}/costs`;
      for (const query of [{}, { from: '2026-05-01T00:00:00Z', to: '2026-06-01T00:00:00Z' }]) {
        const byAgent = (await t.http.get(`${base}/by-agent`).query(query).expect(200)).body;
        expect(byAgent).toEqual([
          {
            agentId: a.id,
            agentName: 'Alpha',
            agentStatus: 'idle',
            costCents: 150,
            inputTokens: 15,
            cachedInputTokens: 0,
            outputTokens: 1,
            eventCount: 2,
            unpricedEventCount: 0,
          },
          {
            agentId: b.id,
            agentName: 'Beta',
            agentStatus: 'idle',
            costCents: 30,
            inputTokens: 0,
            cachedInputTokens: 7,
            outputTokens: 0,
            eventCount: 1,
            unpricedEventCount: 0,
          },
        ]);
      }
      const byModel = (await t.http.get(`${base}/by-agent-model`).expect(200)).body;
      expect(byModel.map((r: Record<string, unknown>) => [r.agentName, r.provider, r.model, r.costCents])).toEqual([
        ['Alpha', 'p1', 'm1', 100],
        ['Alpha', 'p2', 'm2', 50],
        ['Beta', 'p1', 'm1', 30],
      ]);
      const byProvider = (await t.http.get(`${base}/by-provider`).expect(200)).body;
      expect(byProvider.map((r: Record<string, unknown>) => [r.provider, r.costCents, r.eventCount])).toEqual([
        ['p1', 130, 2],
        ['p2', 50, 1],
      ]);
      const byBiller = (await t.http.get(`${base}/by-biller`).expect(200)).body;
      expect(byBiller.map((r: Record<string, unknown>) => [r.biller, r.costCents])).toEqual([
        ['gw', 100],
        ['p2', 50],
        ['p1', 30],
      ]);
      const byProject = (await t.http.get(`${base}/by-project`).expect(200)).body;
      expect(byProject).toEqual([
        expect.objectContaining({ projectId: p.id, projectName: expect.any(String), costCents: 100 }),
        expect.objectContaining({ projectId: null, projectName: null, costCents: 80 }),
      ]);
      const outside = (await t.http.get(`${base}/by-provider`).query({ to: '2026-01-01T00:00:00Z' }).expect(200)).body;
      expect(outside).toEqual([]);
    });

    it('range totals from daily running totals plus partial days equal the raw sums for any from/to', async () => {
      const c = await createCompany(t);
      const agents = [await insertAgent(t, c.id), await insertAgent(t, c.id), await insertAgent(t, c.id)];
      const day0 = Date.parse('2026-07-01T00:00:00.000Z');
      let seed = 7;
      const rnd = () => (seed = (seed * 48271) % 2147483647) / 2147483647;
      const events: Array<{ agentId: string; at: number; cents: number; tokens: number }> = [];
      for (let i = 0; i < 60; i++) {
        // some events exactly at midnight, the rest anywhere in ten days
        const at = i % 10 === 0 ? day0 + (i / 10) * 86400e3 : day0 + Math.floor(rnd() * 10 * 86400e3);
        const e = { agentId: agents[i % 3].id, at, cents: 1 + Math.floor(rnd() * 100), tokens: Math.floor(rnd() * 1000) };
        events.push(e);
        await reportCost(t, c.id, e.agentId, e.cents, { occurredAt: new Date(at).toISOString(), inputTokens: e.tokens }).expect(201);
      }
      const bounds: Array<[number | null, number | null]> = [
        [day0, day0 + 86400e3],
        [day0 + 3600e3, day0 + 5 * 3600e3],
        [day0 + 86400e3, null],
        [null, day0 + 4 * 86400e3 + 1],
        [day0 - 86400e3, day0 + 20 * 86400e3],
      ];
      for (let i = 0; i < 20; i++) {
        const a = day0 + Math.floor(rnd() * 11 * 86400e3) - 86400e3;
        const b = a + Math.floor(rnd() * 5 * 86400e3);
        bounds.push([a, b]);
      }
      for (const [from, to] of bounds) {
        const inRange = events.filter((e) => (from === null || e.at >= from) && (to === null || e.at < to));
        const query: Record<string, string> = {};
        if (from !== null) query.from = new Date(from).toISOString();
        if (to !== null) query.to = new Date(to).toISOString();
        const s = await t.http.get(`/api/companies/${c.id}/costs/summary`).query(query).expect(200);
        const label = JSON.stringify(query);
        expect([label, s.body.spendCents, s.body.eventCount, s.body.inputTokens]).toEqual([
          label,
          inRange.reduce((n, e) => n + e.cents, 0),
          inRange.length,
          inRange.reduce((n, e) => n + e.tokens, 0),
        ]);
        const byAgent = await t.http.get(`/api/companies/${c.id}/costs/by-agent`).query(query).expect(200);
        for (const ag of agents) {
          const mine = inRange.filter((e) => e.agentId === ag.id);
          const row = byAgent.body.find((r: { agentId: string }) => r.agentId === ag.id);
          expect([label, row?.costCents ?? 0, row?.eventCount ?? 0]).toEqual([label, mine.reduce((n, e) => n + e.cents, 0), mine.length]);
        }
      }
    });

    it('window-spend reports rolling 5h, 24h and 7d spend up to now', async () => {
      const c = await createCompany(t);
      const a = await insertAgent(t, c.id);
      const now = new Date('2026-06-10T12:00:00.000Z');
      t.app.get(Clock).set(now);
      const ago = (h: number) => new Date(now.getTime() - h * 3600e3).toISOString();
      await reportCost(t, c.id, a.id, 1, { occurredAt: ago(1) }).expect(201);
      await reportCost(t, c.id, a.id, 10, { occurredAt: ago(6) }).expect(201);
      await reportCost(t, c.id, a.id, 100, { occurredAt: ago(48) }).expect(201);
      await reportCost(t, c.id, a.id, 1000, { occurredAt: ago(24 * 8) }).expect(201);
      await reportCost(t, c.id, a.id, 5000, { occurredAt: new Date(now.getTime() + 3600e3).toISOString() }).expect(201); // future: not yet
      const res = await t.http.get(`/api/companies/${c.id}/costs/window-spend`).expect(200);
      expect(res.body.asOf).toBe(now.toISOString());
      expect(res.body.windows.map((w: Record<string, unknown>) => [w.window, w.spendCents, w.eventCount])).toEqual([
        ['5h', 1, 1],
        ['24h', 11, 2],
        ['7d', 111, 3],
      ]);
    });

    it('quota-windows: per provider and biller, with the oldest event and when it leaves the window; board-only', async () => {
      const c = await createCompany(t);
      const a = await insertAgent(t, c.id);
      const token = await insertAgentKey(t, a);
      const now = new Date('2026-06-10T12:00:00.000Z');
      t.app.get(Clock).set(now);
      await reportCost(t, c.id, a.id, 7, { provider: 'p1', occurredAt: '2026-06-10T10:00:00.000Z' }).expect(201);
      const res = await t.http.get(`/api/companies/${c.id}/costs/quota-windows`).expect(200);
      expect(res.body.providers).toHaveLength(1);
      const [w5] = res.body.providers[0].windows;
      expect(w5).toMatchObject({
        window: '5h',
        spendCents: 7,
        oldestEventAt: '2026-06-10T10:00:00.000Z',
        nextReleaseAt: '2026-06-10T15:00:00.000Z',
      });
      await t.http.get(`/api/companies/${c.id}/costs/quota-windows`).set(bearer(token)).expect(403);
      await t.http.get(`/api/companies/${unknownId()}/costs/quota-windows`).expect(404);
    });

    it('lets an agent read its own company reports, not another company', async () => {
      const c = await createCompany(t);
      const a = await insertAgent(t, c.id);
      const token = await insertAgentKey(t, a);
      await t.http.get(`/api/companies/${c.id}/costs/summary`).set(bearer(token)).expect(200);
      const other = await createCompany(t);
      await t.http.get(`/api/companies/${other.id}/costs/summary`).set(bearer(token)).expect(403);
    });
  });
});

describe('costs: authenticated mode', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ env: { SERVICE_DEPLOYMENT_MODE: 'authenticated' } });
  });
  afterAll(() => t.close());

  it('answers 401 without credentials and accepts the agent itself', async () => {
    const [c] = await t.dataSource.query(`INSERT INTO companies (name, issue_prefix) VALUES ('Auth Co', 'AUC') RETURNING id`);
    const a = await insertAgent(t, c.id);
    const token = await insertAgentKey(t, a);
    await reportCost(t, c.id, a.id, 5).expect(401);
    await t.http.get(`/api/companies/${c.id}/costs/summary`).expect(401);
    await reportCost(t, c.id, a.id, 5, {}, token).expect(201);
  });
});
