import { randomUUID } from 'node:crypto';
import { createCompany } from '../support/factories';
import { activityOf, describeWithoutCredentials, createGoal, createProject, insertAgentWithKey } from '../support/projects';
import { createTestApp, TestApp } from '../support/test-app';
import { tmpPath } from '../support/tmp';

describe('projects', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());

  describe('POST /api/companies/:companyId/projects', () => {
    it('creates a backlog project with urlKey, palette colour, goals, codebase and workspaces', async () => {
      const c = await createCompany(t);
      const res = await t.http.post(`/api/companies/${c.id}/projects`).send({ name: 'Mobile App!' }).expect(201);
      expect(res.body).toMatchObject({
        companyId: c.id,
        name: 'Mobile App!',
        urlKey: 'mobile-app',
        status: 'backlog',
        goalId: null,
        goalIds: [],
        goals: [],
        // no workspace: a codebase of nulls (the board UI reads its fields), origin none
        codebase: {
          workspaceId: null,
          repoUrl: null,
          repoRef: null,
          defaultRef: null,
          repoName: null,
          cwd: null,
          localFolder: null,
          managedFolder: null,
          effectiveLocalFolder: null,
          origin: 'none',
        },
        workspaces: [],
        primaryWorkspace: null,
        taskCount: 0,
        budget: null,
        icon: null,
        managedByPlugin: null,
        archivedAt: null,
        pausedAt: null,
        pauseReason: null,
        env: {},
      });
      expect(res.body.color).toMatch(/^#[0-9a-f]{6}$/);
      const second = await createProject(t, c.id);
      expect(second.color).toMatch(/^#[0-9a-f]{6}$/);
      expect(second.color).not.toBe(res.body.color);
      expect((await activityOf(t, c.id, 'project.created')).length).toBe(2);
    });

    it('gives a taken shortname a numeric suffix', async () => {
      const c = await createCompany(t);
      const a = await createProject(t, c.id, { name: 'API' });
      const b = await createProject(t, c.id, { name: 'api' });
      expect([a.urlKey, b.urlKey]).toEqual(['api', 'api-2']);
      const other = await createCompany(t);
      expect((await createProject(t, other.id, { name: 'API' })).urlKey).toBe('api');
    });

    it('gives concurrent creates of one name distinct shortnames', async () => {
      const c = await createCompany(t);
      const results = await Promise.all(
        Array.from({ length: 5 }, () => t.http.post(`/api/companies/${c.id}/projects`).send({ name: 'Same' })),
      );
      expect(results.map((r) => r.status)).toEqual([201, 201, 201, 201, 201]);
      expect(results.map((r) => r.body.urlKey).sort()).toEqual(['same', 'same-2', 'same-3', 'same-4', 'same-5']);
    });

    it('links goalIds in order with goalId equal to the first; legacy goalId alone links that goal', async () => {
      const c = await createCompany(t);
      const [g1, g2] = [await createGoal(t, c.id), await createGoal(t, c.id)];
      const p = await createProject(t, c.id, { goalIds: [g2.id, g1.id, g2.id] });
      expect(p.goalIds).toEqual([g2.id, g1.id]);
      expect(p.goalId).toBe(g2.id);
      expect(p.goals.map((g: { id: string }) => g.id)).toEqual([g2.id, g1.id]);
      const legacy = await createProject(t, c.id, { goalId: g1.id });
      expect(legacy).toMatchObject({ goalId: g1.id, goalIds: [g1.id] });
      const both = await createProject(t, c.id, { goalId: g1.id, goalIds: [g2.id] });
      expect(both).toMatchObject({ goalId: g2.id, goalIds: [g2.id] });
    });

    it('rejects goals and lead agents of another company with 422', async () => {
      const [a, b] = [await createCompany(t), await createCompany(t)];
      const foreignGoal = await createGoal(t, b.id);
      const foreignAgent = await insertAgentWithKey(t, b.id);
      await t.http
        .post(`/api/companies/${a.id}/projects`)
        .send({ name: 'x', goalIds: [foreignGoal.id] })
        .expect(422);
      await t.http.post(`/api/companies/${a.id}/projects`).send({ name: 'x', goalId: foreignGoal.id }).expect(422);
      await t.http.post(`/api/companies/${a.id}/projects`).send({ name: 'x', leadAgentId: foreignAgent.id }).expect(422);
      const lead = await insertAgentWithKey(t, a.id);
      expect((await createProject(t, a.id, { leadAgentId: lead.id })).leadAgentId).toBe(lead.id);
      expect((await t.http.get(`/api/companies/${a.id}/projects`).expect(200)).body).toHaveLength(1);
    });

    it('validates fields with 400', async () => {
      const c = await createCompany(t);
      for (const body of [
        {},
        { name: '' },
        { name: 'x', status: 'done' },
        { name: 'x', color: 'red' },
        { name: 'x', targetDate: '31/01/2030' },
        { name: 'x', goalIds: ['nope'] },
        { name: 'x', archivedAt: 'yesterday' },
      ]) {
        await t.http.post(`/api/companies/${c.id}/projects`).send(body).expect(400);
      }
    });

    it('stores env with secret references checked against the company (422 otherwise)', async () => {
      const c = await createCompany(t);
      const other = await createCompany(t);
      const secret = async (companyId: string, name: string) =>
        (await t.http.post(`/api/companies/${companyId}/secrets`).send({ name, value: 'v1' }).expect(201)).body.id as string;
      const tokenId = await secret(c.id, 'TOKEN');
      const pinnedId = await secret(c.id, 'PINNED');
      await t.http.post(`/api/secrets/${pinnedId}/rotate`).send({ value: 'v2' }).expect(200);
      const foreignId = await secret(other.id, 'FOREIGN');
      const env = {
        PLAIN: 'value',
        TOKEN: { type: 'secret_ref', secretId: tokenId, version: 'latest' },
        PINNED: { type: 'secret_ref', secretId: pinnedId, version: 2 },
      };
      const p = await createProject(t, c.id, { env });
      expect(p.env).toMatchObject({
        PLAIN: 'value',
        TOKEN: { type: 'secret_ref', secretId: tokenId },
        PINNED: { type: 'secret_ref', secretId: pinnedId, version: 2 },
      });
      await t.http
        .post(`/api/companies/${c.id}/projects`)
        .send({ name: 'x', env: { BAD: { type: 'secret_ref', secretId: randomUUID() } } })
        .expect(422);
      await t.http
        .post(`/api/companies/${c.id}/projects`)
        .send({ name: 'x', env: { BAD: { type: 'secret_ref', secretId: foreignId } } })
        .expect(422);
      await t.http
        .post(`/api/companies/${c.id}/projects`)
        .send({ name: 'x', env: { BAD: { type: 'secret_ref', secretId: 'nope' } } })
        .expect(422);
      await t.http
        .post(`/api/companies/${c.id}/projects`)
        .send({ name: 'x', env: { BAD: { type: 'secret_ref', secretId: randomUUID(), version: 0 } } })
        .expect(422);
      await t.http
        .post(`/api/companies/${c.id}/projects`)
        .send({ name: 'x', env: { 'BAD-NAME': 'v' } })
        .expect(422);
      await t.http
        .post(`/api/companies/${c.id}/projects`)
        .send({ name: 'x', env: { N: 5 } })
        .expect(422);
      const stored = await t.dataSource.query(`SELECT env FROM projects WHERE id = $1`, [p.id]);
      expect(stored[0].env).toEqual(p.env);
    });

    it('seeds the first, primary workspace and derives the codebase from it', async () => {
      const c = await createCompany(t);
      const p = await createProject(t, c.id, { workspace: { cwd: '/srv/app', repoUrl: 'https://example.com/a/app.git', repoRef: 'main' } });
      expect(p.workspaces).toHaveLength(1);
      expect(p.workspaces[0]).toMatchObject({
        cwd: '/srv/app',
        isPrimary: true,
        name: 'app',
        sourceType: 'local_path',
        desiredState: 'stopped',
      });
      expect(p.primaryWorkspace.id).toBe(p.workspaces[0].id);
      expect(p.codebase).toEqual({
        workspaceId: p.workspaces[0].id,
        repoUrl: 'https://example.com/a/app.git',
        repoRef: 'main',
        defaultRef: null,
        repoName: 'app',
        cwd: '/srv/app',
        localFolder: '/srv/app',
        managedFolder: null,
        effectiveLocalFolder: '/srv/app',
        origin: 'local_folder',
      });
    });

    it('rolls the whole creation back with 422 for an invalid workspace payload', async () => {
      const c = await createCompany(t);
      for (const workspace of [
        { name: 'no-location' },
        { cwd: 'relative/path' },
        { sourceType: 'remote_managed', cwd: '/x' },
        { cwd: '/x', runtimeConfig: { args: [] } },
      ]) {
        const res = await t.http.post(`/api/companies/${c.id}/projects`).send({ name: 'Broken', workspace }).expect(422);
        expect(res.body.code).toBe('invalid_workspace');
      }
      expect((await t.dataSource.query(`SELECT count(*)::int AS n FROM projects WHERE company_id = $1`, [c.id]))[0].n).toBe(0);
      expect(await activityOf(t, c.id, 'project.created')).toEqual([]);
    });
  });

  describe('GET /api/projects/:projectId', () => {
    it('finds a project by id or by shortname; unknown ones are 404', async () => {
      const c = await createCompany(t);
      const p = await createProject(t, c.id, { name: 'Short Name' });
      expect((await t.http.get(`/api/projects/${p.id}`).expect(200)).body.id).toBe(p.id);
      expect((await t.http.get(`/api/projects/short-name?companyId=${c.id}`).expect(200)).body.id).toBe(p.id);
      await t.http.get(`/api/projects/${randomUUID()}`).expect(404);
      await t.http.get(`/api/projects/no-such-project-${randomUUID().slice(0, 6)}`).expect(404);
      await t.http.get(`/api/projects/short-name?companyId=${randomUUID()}`).expect(404);
    });

    it('answers 409 for a shortname shared by several companies unless companyId narrows it', async () => {
      const [a, b] = [await createCompany(t), await createCompany(t)];
      const name = `Twin ${randomUUID().slice(0, 6)}`;
      const pa = await createProject(t, a.id, { name });
      const pb = await createProject(t, b.id, { name });
      expect(pa.urlKey).toBe(pb.urlKey);
      expect((await t.http.get(`/api/projects/${pa.urlKey}`).expect(409)).body.code).toBe('ambiguous_project_shortname');
      expect((await t.http.get(`/api/projects/${pa.urlKey}?companyId=${b.id}`).expect(200)).body.id).toBe(pb.id);
      // an agent caller resolves shortnames in its own company
      const agent = await insertAgentWithKey(t, a.id);
      expect((await t.http.get(`/api/projects/${pa.urlKey}`).set(agent.auth).expect(200)).body.id).toBe(pa.id);
      await t.http.get(`/api/projects/${pa.urlKey}?companyId=${b.id}`).set(agent.auth).expect(403);
    });

    it("answers an agent of another company 404 on the project's routes, 403 on the company's", async () => {
      const [a, b] = [await createCompany(t), await createCompany(t)];
      const p = await createProject(t, a.id);
      const other = await insertAgentWithKey(t, b.id);
      await t.http.get(`/api/projects/${p.id}`).set(other.auth).expect(404);
      await t.http.patch(`/api/projects/${p.id}`).set(other.auth).send({ status: 'planned' }).expect(404);
      await t.http.delete(`/api/projects/${p.id}`).set(other.auth).expect(404);
      await t.http.get(`/api/companies/${a.id}/projects`).set(other.auth).expect(403);
    });

    it('shows a pause set by a budget hard stop', async () => {
      const c = await createCompany(t);
      const p = await createProject(t, c.id);
      await t.dataSource.query(`UPDATE projects SET paused_at = now(), pause_reason = 'budget' WHERE id = $1`, [p.id]);
      const got = (await t.http.get(`/api/projects/${p.id}`).expect(200)).body;
      expect(got.pauseReason).toBe('budget');
      expect(Date.parse(got.pausedAt)).not.toBeNaN();
    });
  });

  describe('PATCH /api/projects/:projectId', () => {
    it('updates given fields only', async () => {
      const c = await createCompany(t);
      const p = await createProject(t, c.id, { description: 'keep', color: '#123456' });
      const archivedAt = '2030-01-01T00:00:00.000Z';
      const res = await t.http
        .patch(`/api/projects/${p.id}`)
        .send({
          status: 'in_progress',
          targetDate: '2030-01-31',
          archivedAt,
          executionWorkspacePolicy: { mode: 'isolated' },
          env: { A: 'b' },
        })
        .expect(200);
      expect(res.body).toMatchObject({
        name: p.name,
        description: 'keep',
        color: '#123456',
        status: 'in_progress',
        targetDate: '2030-01-31',
        archivedAt,
        executionWorkspacePolicy: { mode: 'isolated' },
        env: { A: 'b' },
        urlKey: p.urlKey,
      });
      const unarchived = await t.http.patch(`/api/projects/${p.id}`).send({ archivedAt: null, targetDate: null }).expect(200);
      expect(unarchived.body).toMatchObject({ archivedAt: null, targetDate: null, status: 'in_progress' });
      expect((await activityOf(t, c.id, 'project.updated')).length).toBe(2);
    });

    it('keeps goalId equal to the first of goalIds; goalId null unlinks all', async () => {
      const c = await createCompany(t);
      const [g1, g2] = [await createGoal(t, c.id), await createGoal(t, c.id)];
      const p = await createProject(t, c.id, { goalIds: [g1.id, g2.id] });
      const u = (
        await t.http
          .patch(`/api/projects/${p.id}`)
          .send({ goalIds: [g2.id] })
          .expect(200)
      ).body;
      expect(u).toMatchObject({ goalIds: [g2.id], goalId: g2.id });
      const legacy = (await t.http.patch(`/api/projects/${p.id}`).send({ goalId: g1.id }).expect(200)).body;
      expect(legacy).toMatchObject({ goalIds: [g1.id], goalId: g1.id });
      const none = (await t.http.patch(`/api/projects/${p.id}`).send({ goalId: null }).expect(200)).body;
      expect(none).toMatchObject({ goalIds: [], goalId: null });
      const untouched = (await t.http.patch(`/api/projects/${p.id}`).send({ description: 'x' }).expect(200)).body;
      expect(untouched.goalIds).toEqual([]);
    });

    it('renames with a new urlKey; a collision with another shortname is 409', async () => {
      const c = await createCompany(t);
      await createProject(t, c.id, { name: 'Alpha' });
      const p = await createProject(t, c.id, { name: 'Beta' });
      const res = await t.http.patch(`/api/projects/${p.id}`).send({ name: 'ALPHA' }).expect(409);
      expect(res.body.code).toBe('project_shortname_conflict');
      expect((await t.http.patch(`/api/projects/${p.id}`).send({ name: 'Beta!' }).expect(200)).body.urlKey).toBe('beta');
      expect((await t.http.patch(`/api/projects/${p.id}`).send({ name: 'Gamma' }).expect(200)).body.urlKey).toBe('gamma');
      await t.http.get(`/api/projects/gamma?companyId=${c.id}`).expect(200);
    });

    it('lets only one of two concurrent renames onto one shortname win', async () => {
      const c = await createCompany(t);
      const [a, b] = [await createProject(t, c.id), await createProject(t, c.id)];
      const results = await Promise.all([a, b].map((p) => t.http.patch(`/api/projects/${p.id}`).send({ name: 'Winner' })));
      expect(results.map((r) => r.status).sort()).toEqual([200, 409]);
    });

    it('accepts the shortname as the path id', async () => {
      const c = await createCompany(t);
      const p = await createProject(t, c.id, { name: `Unique ${randomUUID().slice(0, 8)}` });
      expect((await t.http.patch(`/api/projects/${p.urlKey}`).send({ status: 'planned' }).expect(200)).body.id).toBe(p.id);
    });
  });

  describe('DELETE /api/projects/:projectId', () => {
    it('returns the deleted row with its workspaces; then 404', async () => {
      const c = await createCompany(t);
      const p = await createProject(t, c.id, { workspace: { cwd: tmpPath('x') } });
      const res = await t.http.delete(`/api/projects/${p.id}`).expect(200);
      expect(res.body).toMatchObject({ id: p.id, name: p.name, urlKey: p.urlKey });
      expect(res.body.workspaces).toHaveLength(1);
      await t.http.get(`/api/projects/${p.id}`).expect(404);
      await t.http.delete(`/api/projects/${p.id}`).expect(404);
      expect((await t.dataSource.query(`SELECT count(*)::int AS n FROM project_workspaces WHERE project_id = $1`, [p.id]))[0].n).toBe(0);
      expect((await activityOf(t, c.id, 'project.deleted'))[0].entityId).toBe(p.id);
    });
  });

  describeWithoutCredentials([
    ['get', `/api/projects/${randomUUID()}`],
    ['post', `/api/companies/${randomUUID()}/projects`, { name: 'x' }],
  ]);
});
