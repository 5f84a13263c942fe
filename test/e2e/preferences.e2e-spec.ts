import { randomUUID } from 'node:crypto';
import { createCompany } from '../support/factories';
import { activityOf, describeWithoutCredentials, createProject, insertAgentWithKey } from '../support/projects';
import { createTestApp, TestApp } from '../support/test-app';

describe('preferences', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());

  const membershipActivity = async (companyId: string) =>
    (await activityOf(t, companyId)).filter((a) => a.action.startsWith('resource_membership.'));

  describe('GET /api/companies/:companyId/resource-memberships/me', () => {
    it('lists every project and agent as joined with updatedAt null until something changes', async () => {
      const c = await createCompany(t);
      const p = await createProject(t, c.id);
      const agent = await insertAgentWithKey(t, c.id);
      const res = await t.http.get(`/api/companies/${c.id}/resource-memberships/me`).expect(200);
      expect(res.body).toEqual({ projectMemberships: { [p.id]: 'joined' }, agentMemberships: { [agent.id]: 'joined' }, updatedAt: null });
    });

    it('is board-only: agent tokens get 403', async () => {
      const c = await createCompany(t);
      const p = await createProject(t, c.id);
      const agent = await insertAgentWithKey(t, c.id);
      await t.http.get(`/api/companies/${c.id}/resource-memberships/me`).set(agent.auth).expect(403);
      await t.http
        .put(`/api/companies/${c.id}/resource-memberships/me/projects/${p.id}`)
        .set(agent.auth)
        .send({ state: 'left' })
        .expect(403);
      await t.http
        .put(`/api/companies/${c.id}/resource-memberships/me/agents/${agent.id}`)
        .set(agent.auth)
        .send({ state: 'left' })
        .expect(403);
    });
  });

  describe('PUT /api/companies/:companyId/resource-memberships/me/projects/:projectId', () => {
    it('stores a change and logs it; the same state again is a no-op', async () => {
      const c = await createCompany(t);
      const p = await createProject(t, c.id);
      const joined = await t.http
        .put(`/api/companies/${c.id}/resource-memberships/me/projects/${p.id}`)
        .send({ state: 'joined' })
        .expect(200);
      expect(joined.body).toEqual({ resourceType: 'project', resourceId: p.id, state: 'joined', updatedAt: null });
      expect(await membershipActivity(c.id)).toEqual([]);

      const left = await t.http.put(`/api/companies/${c.id}/resource-memberships/me/projects/${p.id}`).send({ state: 'left' }).expect(200);
      expect(left.body).toMatchObject({ resourceType: 'project', resourceId: p.id, state: 'left' });
      expect(Date.parse(left.body.updatedAt)).not.toBeNaN();
      const again = await t.http.put(`/api/companies/${c.id}/resource-memberships/me/projects/${p.id}`).send({ state: 'left' }).expect(200);
      expect(again.body).toEqual(left.body);
      const mine = (await t.http.get(`/api/companies/${c.id}/resource-memberships/me`).expect(200)).body;
      expect(mine.projectMemberships[p.id]).toBe('left');
      expect(mine.updatedAt).toBe(left.body.updatedAt);

      await t.http.put(`/api/companies/${c.id}/resource-memberships/me/projects/${p.id}`).send({ state: 'joined' }).expect(200);
      const rows = await membershipActivity(c.id);
      expect(rows.map((r) => r.action)).toEqual(['resource_membership.joined', 'resource_membership.left']);
      expect(rows[0]).toMatchObject({ entityType: 'project', entityId: p.id, actorType: 'user', actorId: 'local-board' });
    });

    it('logs exactly one change under concurrent identical requests', async () => {
      const c = await createCompany(t);
      const p = await createProject(t, c.id);
      const results = await Promise.all(
        Array.from({ length: 6 }, () =>
          t.http.put(`/api/companies/${c.id}/resource-memberships/me/projects/${p.id}`).send({ state: 'left' }),
        ),
      );
      expect(results.every((r) => r.status === 200 && r.body.state === 'left')).toBe(true);
      expect(await membershipActivity(c.id)).toHaveLength(1);
    });

    it('answers 404 for a project of another company or an unknown one, 400 for a bad state', async () => {
      const [a, b] = [await createCompany(t), await createCompany(t)];
      const foreign = await createProject(t, b.id);
      await t.http.put(`/api/companies/${a.id}/resource-memberships/me/projects/${foreign.id}`).send({ state: 'left' }).expect(404);
      await t.http.put(`/api/companies/${a.id}/resource-memberships/me/projects/${randomUUID()}`).send({ state: 'left' }).expect(404);
      await t.http.put(`/api/companies/${a.id}/resource-memberships/me/projects/not-a-uuid`).send({ state: 'left' }).expect(404);
      const own = await createProject(t, a.id);
      await t.http.put(`/api/companies/${a.id}/resource-memberships/me/projects/${own.id}`).send({ state: 'gone' }).expect(400);
      await t.http.put(`/api/companies/${a.id}/resource-memberships/me/projects/${own.id}`).send({}).expect(400);
    });
  });

  describe('PUT /api/companies/:companyId/resource-memberships/me/agents/:agentId', () => {
    it('leaves an agent of the company; another company agent is 404', async () => {
      const [a, b] = [await createCompany(t), await createCompany(t)];
      const agent = await insertAgentWithKey(t, a.id);
      const foreign = await insertAgentWithKey(t, b.id);
      const res = await t.http.put(`/api/companies/${a.id}/resource-memberships/me/agents/${agent.id}`).send({ state: 'left' }).expect(200);
      expect(res.body).toMatchObject({ resourceType: 'agent', resourceId: agent.id, state: 'left' });
      expect((await t.http.get(`/api/companies/${a.id}/resource-memberships/me`).expect(200)).body.agentMemberships[agent.id]).toBe('left');
      await t.http.put(`/api/companies/${a.id}/resource-memberships/me/agents/${foreign.id}`).send({ state: 'left' }).expect(404);
      expect((await membershipActivity(a.id)).map((r) => [r.action, r.entityType])).toEqual([['resource_membership.left', 'agent']]);
    });
  });

  describe('sidebar preferences', () => {
    it('GET /api/sidebar-preferences/me returns defaults; PUT replaces and round-trips', async () => {
      const before = (await t.http.get('/api/sidebar-preferences/me').expect(200)).body;
      expect(before).toEqual({ collapsed: false, companyOrder: [], updatedAt: null });
      const c = await createCompany(t);
      const put = await t.http
        .put('/api/sidebar-preferences/me')
        .send({ collapsed: true, companyOrder: [c.id, c.id] })
        .expect(200);
      expect(put.body).toMatchObject({ collapsed: true, companyOrder: [c.id] });
      const { updatedAt, ...rest } = (await t.http.get('/api/sidebar-preferences/me').expect(200)).body;
      expect(rest).toEqual({ collapsed: true, companyOrder: [c.id] });
      expect(Date.parse(updatedAt)).not.toBeNaN();
      await t.http.put('/api/sidebar-preferences/me').send({ collapsed: 'yes' }).expect(400);
      await t.http
        .put('/api/sidebar-preferences/me')
        .send({ companyOrder: ['x'] })
        .expect(400);
      expect((await t.http.put('/api/sidebar-preferences/me').send({}).expect(200)).body).toMatchObject({
        collapsed: false,
        companyOrder: [],
      });
    });

    it('company preferences round-trip and only name the company projects and agents', async () => {
      const [a, b] = [await createCompany(t), await createCompany(t)];
      const p = await createProject(t, a.id);
      const agent = await insertAgentWithKey(t, a.id);
      const foreign = await createProject(t, b.id);
      expect((await t.http.get(`/api/companies/${a.id}/sidebar-preferences/me`).expect(200)).body).toEqual({
        companyId: a.id,
        projectOrder: [],
        agentOrder: [],
        collapsedSections: [],
        updatedAt: null,
      });
      const body = { projectOrder: [p.id], agentOrder: [agent.id], collapsedSections: ['goals'] };
      expect((await t.http.put(`/api/companies/${a.id}/sidebar-preferences/me`).send(body).expect(200)).body).toMatchObject(body);
      expect((await t.http.get(`/api/companies/${a.id}/sidebar-preferences/me`).expect(200)).body).toMatchObject(body);
      expect((await t.http.get(`/api/companies/${b.id}/sidebar-preferences/me`).expect(200)).body.projectOrder).toEqual([]);
      await t.http
        .put(`/api/companies/${a.id}/sidebar-preferences/me`)
        .send({ projectOrder: [foreign.id] })
        .expect(422);
      await t.http
        .put(`/api/companies/${a.id}/sidebar-preferences/me`)
        .send({ collapsedSections: ['nope'] })
        .expect(400);
      await t.http.get(`/api/companies/${randomUUID()}/sidebar-preferences/me`).expect(404);
    });

    it('is board-only', async () => {
      const c = await createCompany(t);
      const agent = await insertAgentWithKey(t, c.id);
      await t.http.get('/api/sidebar-preferences/me').set(agent.auth).expect(403);
      await t.http.put(`/api/companies/${c.id}/sidebar-preferences/me`).set(agent.auth).send({}).expect(403);
      await t.http.get(`/api/companies/${c.id}/sidebar-badges`).set(agent.auth).expect(403);
      await t.http.get(`/api/companies/${c.id}/inbox-dismissals`).set(agent.auth).expect(403);
    });
  });

  describe('inbox dismissals', () => {
    it('dismisses by default and lists the dismissal; dismissing again replaces it', async () => {
      const c = await createCompany(t);
      const res = await t.http.post(`/api/companies/${c.id}/inbox-dismissals`).send({ itemKey: 'approval:abc' }).expect(201);
      expect(res.body).toMatchObject({
        companyId: c.id,
        userId: 'local-board',
        itemKey: 'approval:abc',
        kind: 'dismiss',
        snoozedUntil: null,
      });
      const until = new Date(Date.now() + 3600_000).toISOString();
      await t.http
        .post(`/api/companies/${c.id}/inbox-dismissals`)
        .send({ itemKey: 'approval:abc', kind: 'snooze', snoozedUntil: until })
        .expect(201);
      const list = (await t.http.get(`/api/companies/${c.id}/inbox-dismissals`).expect(200)).body;
      expect(list).toHaveLength(1);
      expect(list[0]).toMatchObject({ itemKey: 'approval:abc', kind: 'snooze', snoozedUntil: until });
    });

    it('validates itemKey prefixes and the snooze time', async () => {
      const c = await createCompany(t);
      const future = new Date(Date.now() + 3600_000).toISOString();
      const past = new Date(Date.now() - 1000).toISOString();
      await t.http.post(`/api/companies/${c.id}/inbox-dismissals`).send({ itemKey: 'issue:1' }).expect(400);
      await t.http.post(`/api/companies/${c.id}/inbox-dismissals`).send({ itemKey: 'run:' }).expect(400);
      await t.http.post(`/api/companies/${c.id}/inbox-dismissals`).send({}).expect(400);
      await t.http.post(`/api/companies/${c.id}/inbox-dismissals`).send({ itemKey: 'run:1', kind: 'hide' }).expect(400);
      await t.http.post(`/api/companies/${c.id}/inbox-dismissals`).send({ itemKey: 'run:1', kind: 'snooze' }).expect(422);
      await t.http
        .post(`/api/companies/${c.id}/inbox-dismissals`)
        .send({ itemKey: 'run:1', kind: 'snooze', snoozedUntil: past })
        .expect(422);
      await t.http.post(`/api/companies/${c.id}/inbox-dismissals`).send({ itemKey: 'join:1', snoozedUntil: future }).expect(422);
      await t.http
        .post(`/api/companies/${c.id}/inbox-dismissals`)
        .send({ itemKey: 'join:1', kind: 'dismiss', snoozedUntil: future })
        .expect(422);
      await t.http
        .post(`/api/companies/${c.id}/inbox-dismissals`)
        .send({ itemKey: 'attention:budget', kind: 'snooze', snoozedUntil: future })
        .expect(201);
      expect(
        (await t.http.get(`/api/companies/${c.id}/inbox-dismissals`).expect(200)).body.map((d: { itemKey: string }) => d.itemKey),
      ).toEqual(['attention:budget']);
    });

    it('lets snoozed items reappear once the time has passed', async () => {
      const c = await createCompany(t);
      const until = new Date(Date.now() + 3600_000).toISOString();
      const d = (
        await t.http
          .post(`/api/companies/${c.id}/inbox-dismissals`)
          .send({ itemKey: 'run:r1', kind: 'snooze', snoozedUntil: until })
          .expect(201)
      ).body;
      await t.dataSource.query(`UPDATE inbox_dismissals SET snoozed_until = now() - interval '1 second' WHERE id = $1`, [d.id]);
      expect((await t.http.get(`/api/companies/${c.id}/inbox-dismissals`).expect(200)).body).toEqual([]);
    });

    it('keeps dismissals per company and per user', async () => {
      const [a, b] = [await createCompany(t), await createCompany(t)];
      await t.http.post(`/api/companies/${a.id}/inbox-dismissals`).send({ itemKey: 'approval:x' }).expect(201);
      await t.dataSource.query(
        `INSERT INTO inbox_dismissals (company_id, user_id, item_key, kind) VALUES ($1, 'someone-else', 'approval:y', 'dismiss')`,
        [a.id],
      );
      expect((await t.http.get(`/api/companies/${b.id}/inbox-dismissals`).expect(200)).body).toEqual([]);
      expect(
        (await t.http.get(`/api/companies/${a.id}/inbox-dismissals`).expect(200)).body.map((d: { itemKey: string }) => d.itemKey),
      ).toEqual(['approval:x']);
    });
  });

  describe('GET /api/companies/:companyId/sidebar-badges', () => {
    it('counts failed runs of the last 24 h, pending approvals and join requests, and the undismissed inbox', async () => {
      const c = await createCompany(t);
      expect((await t.http.get(`/api/companies/${c.id}/sidebar-badges`).expect(200)).body).toEqual({
        approvals: 0,
        joinRequests: 0,
        failedRuns: 0,
        inbox: 0,
      });
      const agent = await insertAgentWithKey(t, c.id);
      const insertRun = async (status: string, age: string) =>
        (
          await t.dataSource.query(
            `INSERT INTO heartbeat_runs (company_id, agent_id, status, invocation_source, adapter_type, finished_at)
           VALUES ($1, $2, $3, 'on_demand', 'process', now() - $4::interval) RETURNING id`,
            [c.id, agent.id, status, age],
          )
        )[0].id as string;
      const failed = await insertRun('failed', '1 hour');
      await insertRun('timed_out', '2 hours');
      await insertRun('failed', '2 days');
      await insertRun('succeeded', '1 hour');

      // approvals and join requests belong to other modules: simulate their tables in this test database
      const insertApproval = async (status: string) =>
        (
          await t.dataSource.query(
            `INSERT INTO approvals (company_id, type, status, requested_by_actor_type, requested_by_actor_id) VALUES ($1, 'hire_agent', $2, 'user', 'u') RETURNING id`,
            [c.id, status],
          )
        )[0];
      const approval = await insertApproval('pending');
      await insertApproval('approved');
      await t.dataSource.query(
        `INSERT INTO join_requests (company_id, request_type, status) VALUES ($1, 'agent', 'pending_approval'), ($1, 'agent', 'rejected')`,
        [c.id],
      );

      expect((await t.http.get(`/api/companies/${c.id}/sidebar-badges`).expect(200)).body).toEqual({
        approvals: 1,
        joinRequests: 1,
        failedRuns: 2,
        inbox: 4,
      });
      await t.http
        .post(`/api/companies/${c.id}/inbox-dismissals`)
        .send({ itemKey: `run:${failed}` })
        .expect(201);
      const until = new Date(Date.now() + 3600_000).toISOString();
      await t.http
        .post(`/api/companies/${c.id}/inbox-dismissals`)
        .send({ itemKey: `approval:${approval.id}`, kind: 'snooze', snoozedUntil: until })
        .expect(201);
      expect((await t.http.get(`/api/companies/${c.id}/sidebar-badges`).expect(200)).body).toEqual({
        approvals: 1,
        joinRequests: 1,
        failedRuns: 2,
        inbox: 2,
      });
    });
  });

  describeWithoutCredentials([
    ['get', '/api/sidebar-preferences/me'],
    ['get', `/api/companies/${randomUUID()}/resource-memberships/me`],
    ['post', `/api/companies/${randomUUID()}/inbox-dismissals`, { itemKey: 'run:1' }],
  ]);
});
