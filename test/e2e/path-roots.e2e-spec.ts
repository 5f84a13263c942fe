import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { createAgentWithKey } from '../support/agents';
import { bearer, createCompany } from '../support/factories';
import { createProject, createWorkspace } from '../support/projects';
import { skillMd, tmpRoot, writeSkill } from '../support/skills';
import { createTestApp, TestApp } from '../support/test-app';

const asRoot = process.getuid?.() === 0;

describe('path roots: workspace cwds and local-path imports', () => {
  let t: TestApp;
  let root: string;
  beforeAll(async () => {
    t = await createTestApp();
    root = tmpRoot('path-roots-');
  });
  afterAll(async () => {
    await t.close();
    fs.rmSync(root, { recursive: true, force: true });
  });

  describe('POST /api/projects/:projectId/workspaces', () => {
    it('needs credentials of the company', async () => {
      const [a, b] = [await createCompany(t), await createCompany(t)];
      const p = await createProject(t, a.id);
      const foreign = await createAgentWithKey(t, b.id);
      await t.http.post(`/api/projects/${p.id}/workspaces`).set(bearer(foreign.token)).send({ cwd: '/' }).expect(404);
    });

    it.each([
      ['/', 'outside_roots'],
      ['/etc', 'outside_roots'],
      ['/tmp/../etc', 'outside_roots'],
      ['/root-only-nowhere/x', 'outside_roots'],
    ])('refuses cwd %s with 422 path_not_allowed', async (cwd, reason) => {
      const c = await createCompany(t);
      const p = await createProject(t, c.id);
      const res = await t.http.post(`/api/projects/${p.id}/workspaces`).send({ cwd }).expect(422);
      expect(res.body).toMatchObject({ code: 'path_not_allowed', field: 'cwd', reason });
    });

    it('refuses the data directory, its key files and a symbolic link into it, even under an allowed root', async () => {
      const c = await createCompany(t);
      const p = await createProject(t, c.id);
      const link = path.join(root, 'to-data');
      fs.symlinkSync(t.dataDir, link);
      for (const cwd of [t.dataDir, path.join(t.dataDir, 'keys'), `${link}/keys`, path.join(root, '..', path.basename(t.dataDir))]) {
        const res = await t.http.post(`/api/projects/${p.id}/workspaces`).send({ cwd }).expect(422);
        expect(res.body).toMatchObject({ code: 'path_not_allowed', reason: 'protected' });
      }
      const toSlash = path.join(root, 'to-slash');
      fs.symlinkSync('/', toSlash);
      expect(
        (
          await t.http
            .post(`/api/projects/${p.id}/workspaces`)
            .send({ cwd: `${toSlash}/etc` })
            .expect(422)
        ).body.reason,
      ).toBe('outside_roots');
    });

    it('refuses a bad cwd on project create (nothing created) and on PATCH; allows folders under the roots', async () => {
      const c = await createCompany(t);
      const res = await t.http
        .post(`/api/companies/${c.id}/projects`)
        .send({ name: 'Rooted', workspace: { cwd: '/' } })
        .expect(422);
      expect(res.body.code).toBe('path_not_allowed');
      expect((await t.dataSource.query('SELECT count(*)::int AS n FROM projects WHERE company_id = $1', [c.id]))[0].n).toBe(0);
      const p = await createProject(t, c.id);
      const w = await createWorkspace(t, p.id, { cwd: path.join(root, 'not-yet-created') });
      await t.http.patch(`/api/projects/${p.id}/workspaces/${w.id}`).send({ cwd: '/var' }).expect(422);
      await t.http.patch(`/api/projects/${p.id}/workspaces/${w.id}`).send({ name: 'renamed' }).expect(200);
      await t.http.patch(`/api/projects/${p.id}/workspaces/${w.id}`).send({ cwd: '/srv/app' }).expect(200);
    });

    it('SERVICE_WORKSPACE_ROOTS replaces the default roots', async () => {
      const own = tmpRoot('own-root-');
      const t2 = await createTestApp({ databaseUrl: t.databaseUrl, env: { SERVICE_WORKSPACE_ROOTS: `${own}:/opt/never` } });
      try {
        const c = await createCompany(t2);
        const p = await createProject(t2, c.id);
        await t2.http
          .post(`/api/projects/${p.id}/workspaces`)
          .send({ cwd: path.join(own, 'repo') })
          .expect(201);
        await t2.http.post(`/api/projects/${p.id}/workspaces`).send({ cwd: '/srv/app' }).expect(422);
      } finally {
        await t2.close();
        fs.rmSync(own, { recursive: true, force: true });
      }
      await expect(createTestApp({ databaseUrl: t.databaseUrl, env: { SERVICE_WORKSPACE_ROOTS: 'relative/dir' } })).rejects.toThrow(
        /SERVICE_WORKSPACE_ROOTS/,
      );
    });
  });

  describe("the service user's home and other instances' data directories (issue 41)", () => {
    it("refuses the service user's home folder itself, even under a configured root (422 protected)", async () => {
      const home = os.homedir();
      const t2 = await createTestApp({ databaseUrl: t.databaseUrl, env: { SERVICE_WORKSPACE_ROOTS: `${home}:${os.tmpdir()}` } });
      try {
        const p = await createProject(t2, (await createCompany(t2)).id);
        const res = await t2.http.post(`/api/projects/${p.id}/workspaces`).send({ cwd: home }).expect(422);
        expect(res.body).toMatchObject({ code: 'path_not_allowed', reason: 'protected' });
        expect(res.body.error).toMatch(/home folder/);
        // a folder in it is the operator's choice
        await t2.http
          .post(`/api/projects/${p.id}/workspaces`)
          .send({ cwd: path.join(home, 'projects', 'x') })
          .expect(201);
      } finally {
        await t2.close();
      }
      // as root the home is not a default root at all
      if (asRoot) {
        const p = await createProject(t, (await createCompany(t)).id);
        await t.http
          .post(`/api/projects/${p.id}/workspaces`)
          .send({ cwd: path.join(home, 'x') })
          .expect(422);
      }
    });

    it("refuses another instance's data directory and anything in it (found by its key files)", async () => {
      const other = await createTestApp({ databaseUrl: t.databaseUrl });
      try {
        const p = await createProject(t, (await createCompany(t)).id);
        for (const cwd of [other.dataDir, path.join(other.dataDir, 'storage'), path.join(other.dataDir, 'keys')]) {
          const res = await t.http.post(`/api/projects/${p.id}/workspaces`).send({ cwd }).expect(422);
          expect(res.body).toMatchObject({ code: 'path_not_allowed', reason: 'protected' });
        }
        // and a local skill import from it
        fs.mkdirSync(path.join(other.dataDir, 'planted'), { recursive: true });
        fs.writeFileSync(path.join(other.dataDir, 'planted', 'SKILL.md'), skillMd('planted'));
        const c = await createCompany(t);
        const res = await t.http
          .post(`/api/companies/${c.id}/skills/import`)
          .send({ source: path.join(other.dataDir, 'planted') })
          .expect(422);
        expect(res.body).toMatchObject({ code: 'path_not_allowed', reason: 'protected' });
      } finally {
        await other.close();
      }
    });
  });

  describe('POST /api/projects/:projectId/workspaces/:workspaceId/runtime-services/start', () => {
    it('refuses a stored cwd outside the roots (rows written before the rule) with 422 path_not_allowed', async () => {
      const c = await createCompany(t);
      const p = await createProject(t, c.id);
      const w = await createWorkspace(t, p.id, { cwd: root, runtimeConfig: { command: 'true' } });
      await t.dataSource.query(`UPDATE project_workspaces SET cwd = '/' WHERE id = $1`, [w.id]);
      const res = await t.http.post(`/api/projects/${p.id}/workspaces/${w.id}/runtime-services/start`).expect(422);
      expect(res.body.code).toBe('path_not_allowed');
    });
  });

  describe('POST /api/companies/:companyId/skills/import (local paths)', () => {
    const importFrom = (companyId: string, source: string) => t.http.post(`/api/companies/${companyId}/skills/import`).send({ source });

    it('refuses paths outside the roots before looking at them (no existence oracle)', async () => {
      const c = await createCompany(t);
      for (const source of ['/etc', '/etc/../etc/ssl', '/nonexistent-outside/SKILL.md', '/']) {
        const res = await importFrom(c.id, source).expect(422);
        expect(res.body).toMatchObject({ code: 'path_not_allowed', field: 'source', reason: 'outside_roots' });
      }
    });

    it('refuses the data directory (and a link into it)', async () => {
      const c = await createCompany(t);
      fs.mkdirSync(path.join(t.dataDir, 'planted'), { recursive: true });
      fs.writeFileSync(path.join(t.dataDir, 'planted', 'SKILL.md'), skillMd('planted'));
      const link = path.join(root, 'data-link');
      fs.symlinkSync(t.dataDir, link);
      for (const source of [t.dataDir, path.join(t.dataDir, 'planted'), path.join(link, 'planted')]) {
        expect((await importFrom(c.id, source).expect(422)).body).toMatchObject({ code: 'path_not_allowed', reason: 'protected' });
      }
    });

    it('imports a world-readable folder under a root', async () => {
      const c = await createCompany(t);
      const dir = writeSkill(root, 'open-skill', { 'SKILL.md': skillMd('open-skill') });
      const res = await importFrom(c.id, dir).expect(200);
      expect(res.body.imported[0]).toMatchObject({ slug: 'open-skill', sourceType: 'local_path' });
    });

    (asRoot ? it : it.skip)('as root: refuses a root-only (0700) folder and a 0600 file inside a readable one', async () => {
      const c = await createCompany(t);
      const closed = writeSkill(root, 'closed-skill', { 'SKILL.md': skillMd('closed-skill', 'root-only content\n') });
      fs.chmodSync(closed, 0o700);
      const res = await importFrom(c.id, closed).expect(422);
      expect(res.body).toMatchObject({ code: 'path_not_allowed', reason: 'not_readable_by_others' });
      expect(JSON.stringify(res.body)).not.toContain('root-only content');
      const parent = path.join(root, 'closed-parent');
      fs.mkdirSync(parent, { mode: 0o700 });
      const nested = writeSkill(parent, 'inner', { 'SKILL.md': skillMd('inner') });
      expect((await importFrom(c.id, nested).expect(422)).body.reason).toBe('not_readable_by_others');
      const mixed = writeSkill(root, 'mixed-skill', {
        'SKILL.md': skillMd('mixed-skill'),
        'references/secret.md': 'root-only reference\n',
      });
      fs.chmodSync(path.join(mixed, 'references', 'secret.md'), 0o600);
      const r2 = await importFrom(c.id, mixed).expect(422);
      expect(r2.body).toMatchObject({ code: 'path_not_allowed', reason: 'not_readable_by_others' });
      expect(r2.body.error).toContain('references/secret.md');
      const list = (await t.http.get(`/api/companies/${c.id}/skills`).expect(200)).body as Array<{ slug: string }>;
      expect(list.map((s) => s.slug)).not.toEqual(expect.arrayContaining(['closed-skill', 'inner', 'mixed-skill']));
    });

    it('scan-projects skips a stored workspace cwd outside the roots with a warning', async () => {
      const c = await createCompany(t);
      const p = await createProject(t, c.id);
      const w = await createWorkspace(t, p.id, { cwd: root });
      await t.dataSource.query(`UPDATE project_workspaces SET cwd = $2 WHERE id = $1`, [w.id, '/etc']);
      const res = await t.http.post(`/api/companies/${c.id}/skills/scan-projects`).send({}).expect(200);
      expect(res.body.scannedWorkspaces).toBe(0);
      expect(res.body.imported).toEqual([]);
      expect(res.body.warnings.join('\n')).toMatch(/outside the folders this service allows/);
    });
  });
});
