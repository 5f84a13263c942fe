import * as os from 'node:os';
import * as path from 'node:path';
import { createCompany } from '../support/factories';
import { createProject, createWorkspace } from '../support/projects';
import { createTestApp, TestApp } from '../support/test-app';
import { tmpPath } from '../support/tmp';

/**
 * Run by test/e2e/tmpdir.e2e-spec.ts in a child jest whose TMPDIR is a folder of its own (not in
 * the suite: jest.config.js matches *.spec.ts and *.e2e-spec.ts only). The app's default workspace
 * roots then hold that folder, not the usual temporary folder, as on macOS and in many CI systems.
 */
describe('with TMPDIR pointing at another folder', () => {
  const elsewhere = process.env.TMPDIR!;
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t?.close());

  it('os.tmpdir() and the default workspace roots hold it', () => {
    expect(os.tmpdir()).toBe(elsewhere);
    expect(t.config.pathRoots.roots).toContain(elsewhere);
  });

  it('the helpers’ workspaces land under it and are accepted', async () => {
    const c = await createCompany(t);
    const p = await createProject(t, c.id, { workspace: { cwd: tmpPath('x') } });
    const ws = await createWorkspace(t, p.id);
    expect(ws.cwd.startsWith(`${elsewhere}/`)).toBe(true);
    const listed = (await t.http.get(`/api/projects/${p.id}/workspaces`).expect(200)).body;
    expect(listed.map((w: { cwd: string }) => w.cwd)).toEqual(expect.arrayContaining([tmpPath('x'), ws.cwd]));
  });

  it('a folder beside it (the usual temporary folder) is not a root: what a hard-coded path met', async () => {
    const beside = path.join(path.dirname(elsewhere), 'beside');
    if (t.config.pathRoots.roots.some((r) => beside.startsWith(`${r}/`))) return; // beside is under HOME here
    const c = await createCompany(t);
    const p = await createProject(t, c.id);
    const res = await t.http.post(`/api/projects/${p.id}/workspaces`).send({ cwd: beside }).expect(422);
    expect(res.body).toMatchObject({ code: 'path_not_allowed' });
  });
});
