import { createCompany } from '../support/factories';
import { createIssue } from '../support/issues';
import { createProject } from '../support/projects';
import { createTestApp, TestApp } from '../support/test-app';
import { auth, AUTHENTICATED, makeMember, ownedCompany } from '../support/users';

/** The board UI sends its page path in this header on every request. */
const UI = { 'X-Paperclip-Route': '/UI/company/settings/members' };

/** Every field a board UI page reads of a resource, with the type it expects (arrays and objects never missing or null). */
describe('board UI response shapes (contract)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());

  describe('projects', () => {
    it('carry codebase (an object, also without a workspace), workspaces, goals, taskCount, budget, icon and managedByPlugin', async () => {
      const co = await createCompany(t);
      const p = await createProject(t, co.id);
      await createIssue(t, co.id, { projectId: p.id });
      await createIssue(t, co.id, { projectId: p.id });
      const hidden = await createIssue(t, co.id, { projectId: p.id });
      await t.http.patch(`/api/issues/${hidden.id}`).send({ hiddenAt: new Date().toISOString() }).expect(200);
      await t.http
        .post(`/api/companies/${co.id}/budgets/policies`)
        .send({ scopeType: 'project', scopeId: p.id, amount: 5000 })
        .expect((r) => expect([200, 201]).toContain(r.status));
      const [listed] = (await t.http.get(`/api/companies/${co.id}/projects`).expect(200)).body;
      const one = (await t.http.get(`/api/projects/${p.id}`).expect(200)).body;
      for (const project of [listed, one]) {
        expect(project).toMatchObject({
          goals: [],
          goalIds: [],
          workspaces: [],
          primaryWorkspace: null,
          taskCount: 2,
          budget: { amountCents: 5000, windowKind: 'lifetime' },
          icon: null,
          managedByPlugin: null,
        });
        expect(project.codebase).toMatchObject({ origin: 'none', effectiveLocalFolder: null, localFolder: null, repoUrl: null });
      }
    });
  });

  describe('issues', () => {
    it('an issue of a project embeds the project as its own page shows it (workspaces, codebase, goals)', async () => {
      const co = await createCompany(t);
      const p = await createProject(t, co.id, { workspace: { cwd: '/srv/app' } });
      const issue = await createIssue(t, co.id, { projectId: p.id });
      const body = (await t.http.get(`/api/issues/${issue.identifier}`).expect(200)).body;
      expect(body.project).toEqual((await t.http.get(`/api/projects/${p.id}`).expect(200)).body);
      expect(body.project.workspaces).toHaveLength(1);
      expect(body.project.codebase).toMatchObject({ effectiveLocalFolder: '/srv/app', origin: 'local_folder' });
      for (const k of [
        'ancestors',
        'blockedBy',
        'blocks',
        'documentSummaries',
        'mentionedProjects',
        'workProducts',
        'labels',
        'labelIds',
      ]) {
        expect(Array.isArray(body[k])).toBe(true);
      }
    });
  });

  describe('members, invites and the user directory', () => {
    it('answer the bare list, and the board UI (X-Paperclip-Route) the page envelope it reads', async () => {
      const co = await createCompany(t);
      expect(Array.isArray((await t.http.get(`/api/companies/${co.id}/members`).expect(200)).body)).toBe(true);
      const page = (await t.http.get(`/api/companies/${co.id}/members`).set(UI).expect(200)).body;
      expect(page).toEqual({
        members: expect.any(Array),
        access: { currentUserRole: 'owner', canManageMembers: true, canInviteUsers: true, canApproveJoinRequests: true },
      });
      expect((await t.http.get(`/api/companies/${co.id}/user-directory`).set(UI).expect(200)).body).toEqual({ users: expect.any(Array) });

      for (let i = 0; i < 3; i++)
        await t.http
          .post(`/api/companies/${co.id}/invites`)
          .send({ role: 'member', message: `hi ${i}` })
          .expect(201);
      expect((await t.http.get(`/api/companies/${co.id}/invites`).expect(200)).body).toHaveLength(3);
      const first = (await t.http.get(`/api/companies/${co.id}/invites`).query({ limit: 2 }).set(UI).expect(200)).body;
      expect(first.invites).toHaveLength(2);
      expect(first.nextOffset).toBe(2);
      expect(first.invites[0]).toMatchObject({
        state: 'active',
        status: 'active',
        inviteType: 'company_join',
        humanRole: 'member',
        inviteMessage: 'hi 2',
        invitedByUserId: 'local-board',
        invitedByUser: { id: 'local-board', name: 'Local board' },
      });
      expect(first.invites[0].createdAt).toEqual(expect.any(String));
      const second = (await t.http.get(`/api/companies/${co.id}/invites`).query({ limit: 2, offset: 2 }).set(UI).expect(200)).body;
      expect(second.invites).toHaveLength(1);
      expect(second.nextOffset).toBeNull();
      await t.http.get(`/api/companies/${co.id}/invites`).query({ limit: 0 }).set(UI).expect(400);
      // the UI's invite form names the role humanRole and the message agentMessage
      const byUi = (
        await t.http
          .post(`/api/companies/${co.id}/invites`)
          .send({ allowedJoinTypes: 'human', humanRole: 'operator', agentMessage: null })
          .expect(201)
      ).body;
      expect(byUi).toMatchObject({ role: 'operator', humanRole: 'operator', allowedJoinTypes: 'human', message: null });
      await t.http.post(`/api/companies/${co.id}/invites`).send({ humanRole: 'boss' }).expect(400);
    });
  });

  describe('export preview and download of the board UI', () => {
    it('preview: files keyed by path with their text, a manifest with includes, agents, projects, skills and tasks; download as JSON; selectedFiles', async () => {
      const co = await createCompany(t, { name: 'Shapes Export Co' });
      const p = await createProject(t, co.id, { name: 'Export Project' });
      await createIssue(t, co.id, { title: 'Exported task', projectId: p.id });
      const body = { include: { company: true, agents: true, projects: true, issues: true, skills: true } };
      // other clients: the size list, as before
      const plain = (await t.http.post(`/api/companies/${co.id}/exports/preview`).send(body).expect(200)).body;
      expect(Array.isArray(plain.files)).toBe(true);
      const ui = (await t.http.post(`/api/companies/${co.id}/exports/preview`).set(UI).send(body).expect(200)).body;
      expect(typeof ui.files['COMPANY.md']).toBe('string');
      expect(ui.files['COMPANY.md']).toContain('Shapes Export Co');
      expect(ui.fileInventory).toEqual(plain.files);
      expect(ui.manifest).toMatchObject({
        includes: { company: true, agents: true, projects: true, issues: true, skills: true },
        projects: [{ slug: 'export-project', name: 'Export Project', path: 'projects/export-project/PROJECT.md' }],
        skills: expect.any(Array),
        embeddedAssets: [],
      });
      const [task] = ui.manifest.issues;
      expect(task).toMatchObject({ title: 'Exported task', recurring: false, projectSlug: 'export-project' });
      expect(ui.files[task.path]).toContain('Exported task');

      const download = await t.http
        .post(`/api/companies/${co.id}/exports`)
        .set(UI)
        .send({ ...body, selectedFiles: ['COMPANY.md'] })
        .expect(200);
      expect(download.headers['content-type']).toMatch(/application\/json/);
      expect(Object.keys(download.body.files)).toEqual(['COMPANY.md']);
      expect(download.body.rootPath).toBe(ui.rootPath);
      const archive = await t.http.post(`/api/companies/${co.id}/exports`).send(body).expect(200);
      expect(archive.headers['content-type']).toMatch(/application\/gzip/);
    });
  });
});

describe('board UI response shapes (authenticated mode)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ env: AUTHENTICATED });
  });
  afterAll(() => t.close());

  it("members page access flags follow the caller's role; no credentials 401, another company 403", async () => {
    const { company, owner } = await ownedCompany(t);
    const viewer = await makeMember(t, company.id, 'viewer');
    const asOwner = (await t.http.get(`/api/companies/${company.id}/members`).set(UI).set(auth(owner.token)).expect(200)).body;
    expect(asOwner.access).toEqual({
      currentUserRole: 'owner',
      canManageMembers: true,
      canInviteUsers: true,
      canApproveJoinRequests: true,
    });
    const asViewer = (await t.http.get(`/api/companies/${company.id}/members`).set(UI).set(auth(viewer.token)).expect(200)).body;
    expect(asViewer.access).toEqual({
      currentUserRole: 'viewer',
      canManageMembers: false,
      canInviteUsers: false,
      canApproveJoinRequests: false,
    });
    expect(asViewer.members.map((m: { principalId: string }) => m.principalId).sort()).toEqual([owner.id, viewer.id].sort());
    // agents have their own pages: the UI's members page lists people
    await t.http
      .post(`/api/companies/${company.id}/agents`)
      .set(auth(owner.token))
      .send({ name: 'Member Agent', role: 'engineer', adapterType: 'process', adapterConfig: { command: 'true' } })
      .expect(201);
    expect((await t.http.get(`/api/companies/${company.id}/members`).set(UI).set(auth(owner.token)).expect(200)).body.members).toHaveLength(
      2,
    );
    expect((await t.http.get(`/api/companies/${company.id}/members`).set(auth(owner.token)).expect(200)).body).toHaveLength(3);
    await t.http.get(`/api/companies/${company.id}/members`).set(UI).expect(401);
    const other = await ownedCompany(t);
    await t.http.get(`/api/companies/${company.id}/members`).set(UI).set(auth(other.owner.token)).expect(403);
  });
});
