import { randomUUID } from 'node:crypto';
import { createCompany } from '../support/factories';
import { activityOf, describeWithoutCredentials, createProject, createWorkspace, insertAgentWithKey } from '../support/projects';
import { createTestApp, TestApp } from '../support/test-app';
import { tmpPath } from '../support/tmp';

describe('project workspaces', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());

  const primaries = async (projectId: string) =>
    ((await t.http.get(`/api/projects/${projectId}/workspaces`).expect(200)).body as Array<{ id: string; isPrimary: boolean }>).filter(
      (w) => w.isPrimary,
    );

  describe('POST /api/projects/:projectId/workspaces', () => {
    it('requires at least one of cwd or repoUrl', async () => {
      const c = await createCompany(t);
      const p = await createProject(t, c.id);
      const res = await t.http.post(`/api/projects/${p.id}/workspaces`).send({ name: 'nothing' }).expect(422);
      expect(res.body.code).toBe('invalid_workspace');
      expect((await t.http.get(`/api/projects/${p.id}/workspaces`).expect(200)).body).toEqual([]);
      const repo = await t.http.post(`/api/projects/${p.id}/workspaces`).send({ repoUrl: 'https://example.com/org/repo.git' }).expect(201);
      expect(repo.body).toMatchObject({ repoUrl: 'https://example.com/org/repo.git', sourceType: 'git_repo', name: 'repo', cwd: null });
    });

    it('requires remoteWorkspaceRef or repoUrl for remote_managed', async () => {
      const c = await createCompany(t);
      const p = await createProject(t, c.id);
      await t.http.post(`/api/projects/${p.id}/workspaces`).send({ sourceType: 'remote_managed' }).expect(422);
      await t.http
        .post(`/api/projects/${p.id}/workspaces`)
        .send({ sourceType: 'remote_managed', cwd: tmpPath('x') })
        .expect(422);
      const ok = await t.http
        .post(`/api/projects/${p.id}/workspaces`)
        .send({ name: 'r', sourceType: 'remote_managed', remoteWorkspaceRef: 'ws-1', remoteProvider: 'cloud' })
        .expect(201);
      expect(ok.body).toMatchObject({ sourceType: 'remote_managed', remoteWorkspaceRef: 'ws-1', remoteProvider: 'cloud' });
      await t.http
        .post(`/api/projects/${p.id}/workspaces`)
        .send({ sourceType: 'remote_managed', repoUrl: 'git@example.com:o/r.git' })
        .expect(201);
    });

    it('stores every field of the spec', async () => {
      const c = await createCompany(t);
      const p = await createProject(t, c.id);
      const body = {
        name: 'full',
        sourceType: 'non_git_path',
        cwd: '/srv/full',
        repoUrl: 'https://example.com/o/full.git',
        repoRef: 'feature',
        defaultRef: 'main',
        visibility: 'advanced',
        setupCommand: 'npm ci',
        cleanupCommand: 'rm -rf tmp',
        remoteProvider: 'none',
        remoteWorkspaceRef: 'ref',
        sharedWorkspaceKey: 'shared',
        metadata: { a: 1 },
        runtimeConfig: {
          command: 'node',
          args: ['server.js'],
          env: { MODE: 'dev' },
          port: 4000,
          healthCheck: { path: '/health', timeoutMs: 5000 },
        },
      };
      const res = await t.http.post(`/api/projects/${p.id}/workspaces`).send(body).expect(201);
      expect(res.body).toMatchObject({ ...body, isPrimary: true, desiredState: 'stopped', projectId: p.id, companyId: c.id });
      expect(res.body.runtimeService).toMatchObject({ status: 'stopped', pid: null });
      expect((await activityOf(t, c.id, 'project_workspace.created'))[0].entityId).toBe(res.body.id);
    });

    it('validates the payload with 400', async () => {
      const c = await createCompany(t);
      const p = await createProject(t, c.id);
      for (const body of [
        { cwd: 'relative' },
        { cwd: '/x', sourceType: 'ftp' },
        { cwd: '/x', runtimeConfig: { command: '' } },
        { cwd: '/x', runtimeConfig: { command: 'node', port: 70000 } },
        { cwd: '/x', runtimeConfig: { command: 'node', args: 'server.js' } },
        { cwd: '/x', isPrimary: 'yes' },
        { cwd: '/x', metadata: 'm' },
      ]) {
        await t.http.post(`/api/projects/${p.id}/workspaces`).send(body).expect(400);
      }
      await t.http
        .post(`/api/projects/${p.id}/workspaces`)
        .send({ cwd: '/x', runtimeConfig: { command: 'node', env: { 'BAD NAME': 'x' } } })
        .expect(422);
    });

    it('makes the first workspace primary and moves primacy with isPrimary: true', async () => {
      const c = await createCompany(t);
      const p = await createProject(t, c.id);
      const w1 = await createWorkspace(t, p.id);
      const w2 = await createWorkspace(t, p.id);
      expect([w1.isPrimary, w2.isPrimary]).toEqual([true, false]);
      const w3 = await createWorkspace(t, p.id, { isPrimary: true });
      expect(w3.isPrimary).toBe(true);
      expect((await primaries(p.id)).map((w) => w.id)).toEqual([w3.id]);
      const moved = await t.http.patch(`/api/projects/${p.id}/workspaces/${w2.id}`).send({ isPrimary: true }).expect(200);
      expect(moved.body.isPrimary).toBe(true);
      expect((await primaries(p.id)).map((w) => w.id)).toEqual([w2.id]);
      const project = (await t.http.get(`/api/projects/${p.id}`).expect(200)).body;
      expect(project.primaryWorkspace.id).toBe(w2.id);
      expect(project.codebase.cwd).toBe(w2.cwd);
    });

    it('keeps exactly one primary under concurrent creates', async () => {
      const c = await createCompany(t);
      const p = await createProject(t, c.id);
      const results = await Promise.all(
        Array.from({ length: 6 }, (_, i) => t.http.post(`/api/projects/${p.id}/workspaces`).send({ cwd: tmpPath(`c${i}`) })),
      );
      expect(results.map((r) => r.status)).toEqual([201, 201, 201, 201, 201, 201]);
      expect(results.filter((r) => r.body.isPrimary)).toHaveLength(1);
      expect(await primaries(p.id)).toHaveLength(1);
    });

    it('answers 404 for an unknown project and for an agent of another company', async () => {
      await t.http.post(`/api/projects/${randomUUID()}/workspaces`).send({ cwd: '/x' }).expect(404);
      const [a, b] = [await createCompany(t), await createCompany(t)];
      const p = await createProject(t, a.id);
      const other = await insertAgentWithKey(t, b.id);
      await t.http.post(`/api/projects/${p.id}/workspaces`).set(other.auth).send({ cwd: '/x' }).expect(404);
      await t.http.get(`/api/projects/${p.id}/workspaces`).set(other.auth).expect(404);
      const own = await insertAgentWithKey(t, a.id);
      await t.http.post(`/api/projects/${p.id}/workspaces`).set(own.auth).send({ cwd: '/srv/x' }).expect(201);
    });
  });

  describe('PATCH /api/projects/:projectId/workspaces/:workspaceId', () => {
    it('updates given fields and re-checks the location rules on the result', async () => {
      const c = await createCompany(t);
      const p = await createProject(t, c.id);
      const w = await createWorkspace(t, p.id, { cwd: '/srv/a', setupCommand: 'make' });
      const res = await t.http
        .patch(`/api/projects/${p.id}/workspaces/${w.id}`)
        .send({ repoUrl: 'https://example.com/a.git', name: 'renamed' })
        .expect(200);
      expect(res.body).toMatchObject({ cwd: '/srv/a', setupCommand: 'make', repoUrl: 'https://example.com/a.git', name: 'renamed' });
      await t.http.patch(`/api/projects/${p.id}/workspaces/${w.id}`).send({ cwd: null }).expect(200);
      await t.http.patch(`/api/projects/${p.id}/workspaces/${w.id}`).send({ repoUrl: null }).expect(422);
      await t.http
        .patch(`/api/projects/${p.id}/workspaces/${w.id}`)
        .send({ runtimeConfig: { command: 'node' } })
        .expect(200);
      expect(
        (await t.http.patch(`/api/projects/${p.id}/workspaces/${w.id}`).send({ runtimeConfig: null }).expect(200)).body.runtimeConfig,
      ).toBeNull();
      expect((await activityOf(t, c.id, 'project_workspace.updated')).length).toBe(4);
    });

    it('hands primacy to the oldest other workspace on isPrimary: false; the only workspace stays primary (422)', async () => {
      const c = await createCompany(t);
      const p = await createProject(t, c.id);
      const w1 = await createWorkspace(t, p.id);
      await t.http.patch(`/api/projects/${p.id}/workspaces/${w1.id}`).send({ isPrimary: false }).expect(422);
      const w2 = await createWorkspace(t, p.id);
      await t.http.patch(`/api/projects/${p.id}/workspaces/${w1.id}`).send({ isPrimary: false }).expect(200);
      expect((await primaries(p.id)).map((w) => w.id)).toEqual([w2.id]);
    });

    it('keeps exactly one primary under concurrent moves', async () => {
      const c = await createCompany(t);
      const p = await createProject(t, c.id);
      const ws = [];
      for (let i = 0; i < 5; i++) ws.push(await createWorkspace(t, p.id));
      const results = await Promise.all(ws.map((w) => t.http.patch(`/api/projects/${p.id}/workspaces/${w.id}`).send({ isPrimary: true })));
      expect(results.map((r) => r.status)).toEqual([200, 200, 200, 200, 200]);
      expect(await primaries(p.id)).toHaveLength(1);
    });

    it('answers 404 for a workspace of another project', async () => {
      const c = await createCompany(t);
      const [p1, p2] = [await createProject(t, c.id), await createProject(t, c.id)];
      const w = await createWorkspace(t, p1.id);
      await t.http.patch(`/api/projects/${p2.id}/workspaces/${w.id}`).send({ name: 'x' }).expect(404);
      await t.http.delete(`/api/projects/${p2.id}/workspaces/${w.id}`).expect(404);
      await t.http.patch(`/api/projects/${p1.id}/workspaces/not-a-uuid`).send({ name: 'x' }).expect(404);
    });
  });

  describe('DELETE /api/projects/:projectId/workspaces/:workspaceId', () => {
    it('returns the deleted row and promotes the oldest remaining workspace when the primary goes', async () => {
      const c = await createCompany(t);
      const p = await createProject(t, c.id);
      const w1 = await createWorkspace(t, p.id);
      const w2 = await createWorkspace(t, p.id);
      const w3 = await createWorkspace(t, p.id);
      const d = await t.http.delete(`/api/projects/${p.id}/workspaces/${w1.id}`).expect(200);
      expect(d.body).toMatchObject({ id: w1.id, isPrimary: true });
      expect((await primaries(p.id)).map((w) => w.id)).toEqual([w2.id]);
      await t.http.delete(`/api/projects/${p.id}/workspaces/${w3.id}`).expect(200);
      expect((await primaries(p.id)).map((w) => w.id)).toEqual([w2.id]);
      await t.http.delete(`/api/projects/${p.id}/workspaces/${w2.id}`).expect(200);
      const project = (await t.http.get(`/api/projects/${p.id}`).expect(200)).body;
      expect(project).toMatchObject({
        workspaces: [],
        primaryWorkspace: null,
        codebase: { workspaceId: null, origin: 'none', effectiveLocalFolder: null },
      });
      expect((await activityOf(t, c.id, 'project_workspace.deleted')).length).toBe(3);
    });
  });

  describeWithoutCredentials([
    ['get', `/api/projects/${randomUUID()}/workspaces`],
    ['post', `/api/projects/${randomUUID()}/workspaces`, { cwd: '/x' }],
    ['patch', `/api/projects/${randomUUID()}/workspaces/${randomUUID()}`, { name: 'x' }],
    ['delete', `/api/projects/${randomUUID()}/workspaces/${randomUUID()}`],
  ]);
});
