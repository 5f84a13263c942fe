import { randomUUID } from 'node:crypto';
import { createCompany } from '../support/factories';
import { activityOf, describeWithoutCredentials, createGoal, createProject, insertAgentWithKey } from '../support/projects';
import { createTestApp, TestApp } from '../support/test-app';

describe('goals', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());

  describe('POST /api/companies/:companyId/goals', () => {
    it('creates a goal with level task and status planned by default', async () => {
      const c = await createCompany(t);
      const res = await t.http.post(`/api/companies/${c.id}/goals`).send({ title: 'Ship it', description: 'soon' }).expect(201);
      expect(res.body).toMatchObject({
        companyId: c.id,
        title: 'Ship it',
        description: 'soon',
        level: 'task',
        status: 'planned',
        parentId: null,
        ownerAgentId: null,
        isCompanyDefault: false,
      });
      expect((await activityOf(t, c.id, 'goal.created')).map((a) => a.entityId)).toEqual([res.body.id]);
    });

    it('rejects a missing title and unknown level or status with 400', async () => {
      const c = await createCompany(t);
      await t.http.post(`/api/companies/${c.id}/goals`).send({ description: 'x' }).expect(400);
      await t.http.post(`/api/companies/${c.id}/goals`).send({ title: 'x', level: 'galaxy' }).expect(400);
      await t.http.post(`/api/companies/${c.id}/goals`).send({ title: 'x', status: 'done' }).expect(400);
      await t.http.post(`/api/companies/${c.id}/goals`).send({ title: 'x', parentId: 'nope' }).expect(400);
      expect((await t.http.get(`/api/companies/${c.id}/goals`).expect(200)).body).toEqual([]);
    });

    it('rejects a parent or owner agent of another company with 422', async () => {
      const [a, b] = [await createCompany(t), await createCompany(t)];
      const foreignGoal = await createGoal(t, b.id);
      const foreignAgent = await insertAgentWithKey(t, b.id);
      await t.http.post(`/api/companies/${a.id}/goals`).send({ title: 'x', parentId: foreignGoal.id }).expect(422);
      await t.http.post(`/api/companies/${a.id}/goals`).send({ title: 'x', ownerAgentId: foreignAgent.id }).expect(422);
      const own = await insertAgentWithKey(t, a.id);
      const parent = await createGoal(t, a.id, { level: 'company' });
      const g = await createGoal(t, a.id, { parentId: parent.id, ownerAgentId: own.id, level: 'team', status: 'active' });
      expect(g).toMatchObject({ parentId: parent.id, ownerAgentId: own.id, level: 'team', status: 'active' });
    });

    it('answers 404 for an unknown company and 403 for an agent of another company', async () => {
      await t.http.post(`/api/companies/${randomUUID()}/goals`).send({ title: 'x' }).expect(404);
      const [a, b] = [await createCompany(t), await createCompany(t)];
      const agent = await insertAgentWithKey(t, a.id);
      await t.http.post(`/api/companies/${b.id}/goals`).set(agent.auth).send({ title: 'x' }).expect(403);
      await t.http.get(`/api/companies/${b.id}/goals`).set(agent.auth).expect(403);
      const own = await t.http.post(`/api/companies/${a.id}/goals`).set(agent.auth).send({ title: 'by agent' }).expect(201);
      expect((await activityOf(t, a.id, 'goal.created'))[0]).toMatchObject({
        actorType: 'agent',
        agentId: agent.id,
        entityId: own.body.id,
      });
    });
  });

  describe('GET /api/goals/:goalId', () => {
    it('returns the goal; 404 unknown or malformed id, and for an agent of another company', async () => {
      const [a, b] = [await createCompany(t), await createCompany(t)];
      const g = await createGoal(t, a.id);
      expect((await t.http.get(`/api/goals/${g.id}`).expect(200)).body).toEqual(g);
      await t.http.get(`/api/goals/${randomUUID()}`).expect(404);
      await t.http.get(`/api/goals/not-a-uuid`).expect(404);
      const other = await insertAgentWithKey(t, b.id);
      await t.http.get(`/api/goals/${g.id}`).set(other.auth).expect(404);
      await t.http.patch(`/api/goals/${g.id}`).set(other.auth).send({ title: 'x' }).expect(404);
      await t.http.delete(`/api/goals/${g.id}`).set(other.auth).expect(404);
    });
  });

  describe('PATCH /api/goals/:goalId', () => {
    it('changes given fields and leaves omitted ones unchanged', async () => {
      const c = await createCompany(t);
      const g = await createGoal(t, c.id, { description: 'keep', level: 'team' });
      const res = await t.http.patch(`/api/goals/${g.id}`).send({ status: 'achieved' }).expect(200);
      expect(res.body).toMatchObject({ title: g.title, description: 'keep', level: 'team', status: 'achieved' });
      const cleared = await t.http.patch(`/api/goals/${g.id}`).send({ description: null }).expect(200);
      expect(cleared.body.description).toBeNull();
      expect((await activityOf(t, c.id, 'goal.updated')).length).toBe(2);
    });

    it('rejects a parent that would create a cycle with 422', async () => {
      const c = await createCompany(t);
      const root = await createGoal(t, c.id);
      const child = await createGoal(t, c.id, { parentId: root.id });
      const grandchild = await createGoal(t, c.id, { parentId: child.id });
      await t.http.patch(`/api/goals/${root.id}`).send({ parentId: root.id }).expect(422);
      const res = await t.http.patch(`/api/goals/${root.id}`).send({ parentId: grandchild.id }).expect(422);
      expect(res.body.code).toBe('goal_cycle');
      await t.http.patch(`/api/goals/${grandchild.id}`).send({ parentId: root.id }).expect(200);
      await t.http.patch(`/api/goals/${grandchild.id}`).send({ parentId: null }).expect(200);
    });

    it('answers 404 for an unknown goal', async () => {
      await t.http.patch(`/api/goals/${randomUUID()}`).send({ title: 'x' }).expect(404);
    });
  });

  describe('DELETE /api/goals/:goalId', () => {
    it('returns the deleted row; children move to its parent; linked projects keep goalId on their next goal', async () => {
      const c = await createCompany(t);
      const root = await createGoal(t, c.id);
      const middle = await createGoal(t, c.id, { parentId: root.id });
      const leaf = await createGoal(t, c.id, { parentId: middle.id });
      const other = await createGoal(t, c.id);
      const p = await createProject(t, c.id, { goalIds: [middle.id, other.id] });
      expect(p.goalId).toBe(middle.id);
      const res = await t.http.delete(`/api/goals/${middle.id}`).expect(200);
      expect(res.body).toMatchObject({ id: middle.id, title: middle.title, parentId: root.id });
      await t.http.get(`/api/goals/${middle.id}`).expect(404);
      expect((await t.http.get(`/api/goals/${leaf.id}`).expect(200)).body.parentId).toBe(root.id);
      const after = (await t.http.get(`/api/projects/${p.id}`).expect(200)).body;
      expect(after.goalIds).toEqual([other.id]);
      expect(after.goalId).toBe(other.id);
      expect((await activityOf(t, c.id, 'goal.deleted'))[0].entityId).toBe(middle.id);
      await t.http.delete(`/api/goals/${middle.id}`).expect(404);
    });
  });

  describe('GET /api/companies/:companyId/goals/default', () => {
    it('is 404 without goals, then the oldest company-level goal, then the flagged goal', async () => {
      const c = await createCompany(t);
      await t.http.get(`/api/companies/${c.id}/goals/default`).expect(404);
      await createGoal(t, c.id, { level: 'team' });
      await t.http.get(`/api/companies/${c.id}/goals/default`).expect(404);
      const first = await createGoal(t, c.id, { level: 'company' });
      await createGoal(t, c.id, { level: 'company' });
      expect((await t.http.get(`/api/companies/${c.id}/goals/default`).expect(200)).body.id).toBe(first.id);
      const flagged = await createGoal(t, c.id, { isCompanyDefault: true });
      expect((await t.http.get(`/api/companies/${c.id}/goals/default`).expect(200)).body.id).toBe(flagged.id);
    });

    it('keeps one flagged default per company: flagging another goal moves the flag', async () => {
      const c = await createCompany(t);
      const g1 = await createGoal(t, c.id, { isCompanyDefault: true });
      const g2 = await createGoal(t, c.id);
      await t.http.patch(`/api/goals/${g2.id}`).send({ isCompanyDefault: true }).expect(200);
      expect((await t.http.get(`/api/goals/${g1.id}`).expect(200)).body.isCompanyDefault).toBe(false);
      expect((await t.http.get(`/api/companies/${c.id}/goals/default`).expect(200)).body.id).toBe(g2.id);
      await t.http.patch(`/api/goals/${g2.id}`).send({ isCompanyDefault: false }).expect(200);
      await t.http.get(`/api/companies/${c.id}/goals/default`).expect(404);
    });

    it('keeps exactly one flagged default under concurrent flagging', async () => {
      const c = await createCompany(t);
      const goals = await Promise.all(Array.from({ length: 5 }, () => createGoal(t, c.id)));
      const results = await Promise.all(goals.map((g) => t.http.patch(`/api/goals/${g.id}`).send({ isCompanyDefault: true })));
      expect(results.map((r) => r.status)).toEqual([200, 200, 200, 200, 200]);
      const list = (await t.http.get(`/api/companies/${c.id}/goals`).expect(200)).body as Array<{ isCompanyDefault: boolean }>;
      expect(list.filter((g) => g.isCompanyDefault)).toHaveLength(1);
    });
  });

  describeWithoutCredentials([
    ['get', `/api/companies/${randomUUID()}/goals`],
    ['get', `/api/goals/${randomUUID()}`],
    ['post', `/api/companies/${randomUUID()}/goals`, { title: 'x' }],
  ]);
});
