import { bearer, createCompany } from '../support/factories';
import { activityActions, createDoc, PNG_1x1, putDoc, upload } from '../support/documents';
import { agentHeaders, createIssue, insertAgent, insertCompany, insertProject } from '../support/issues';
import { createTestApp, TestApp } from '../support/test-app';

describe('artifacts and work products', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());

  const artifacts = async (companyId: string, query: Record<string, string | number> = {}, headers: Record<string, string> = {}) =>
    (await t.http.get(`/api/companies/${companyId}/artifacts`).query(query).set(headers).expect(200)).body;

  describe('issue work products', () => {
    it('creates, lists, updates and deletes work products under the issue', async () => {
      const c = await createCompany(t);
      const issue = await createIssue(t, c.id);
      const base = `/api/issues/${issue.id}/work-products`;
      const pr = (
        await t.http.post(base).send({ type: 'pull_request', title: 'PR #1', url: 'https://git.example/pr/1', status: 'open' }).expect(201)
      ).body;
      expect(pr).toMatchObject({
        issueId: issue.id,
        type: 'pull_request',
        title: 'PR #1',
        url: 'https://git.example/pr/1',
        attachmentId: null,
        createdByUserId: 'local-board',
      });
      const file = (await upload(t, c.id, issue.id, 'shot.png', 'image/png', PNG_1x1).expect(201)).body;
      const art = (await t.http.post(base).send({ type: 'artifact', title: 'Screenshot', attachmentId: file.id }).expect(201)).body;
      expect(art.contentPath).toBe(file.contentPath);
      expect((await t.http.get(base).expect(200)).body.map((w: { id: string }) => w.id)).toEqual([pr.id, art.id]);
      const upd = (await t.http.patch(`${base}/${pr.id}`).send({ status: 'merged', summary: 'done' }).expect(200)).body;
      expect(upd).toMatchObject({ status: 'merged', summary: 'done', url: pr.url, title: 'PR #1' });
      expect((await t.http.get(`${base}/${pr.id}`).expect(200)).body.status).toBe('merged');
      expect((await t.http.get(`/api/issues/${issue.id}`).expect(200)).body.workProducts.map((w: { id: string }) => w.id)).toEqual([
        pr.id,
        art.id,
      ]);
      await t.http.delete(`${base}/${pr.id}`).expect(200);
      await t.http.get(`${base}/${pr.id}`).expect(404);
      expect(await activityActions(t, issue.id)).toEqual(
        expect.arrayContaining(['issue.work_product_created', 'issue.work_product_updated', 'issue.work_product_deleted']),
      );
    });

    it('needs a url or an attachment of the same issue (422) and validates its fields (400)', async () => {
      const c = await createCompany(t);
      const issue = await createIssue(t, c.id);
      const other = await createIssue(t, c.id);
      const foreign = (await upload(t, c.id, other.id, 'a.txt', 'text/plain', 'x').expect(201)).body;
      const base = `/api/issues/${issue.id}/work-products`;
      await t.http.post(base).send({ type: 'artifact', title: 'x' }).expect(422);
      await t.http.post(base).send({ type: 'artifact', title: 'x', attachmentId: foreign.id }).expect(422);
      for (const bad of [
        { type: 'thing', title: 'x', url: 'https://a.b' },
        { type: 'artifact', title: '', url: 'https://a.b' },
        { type: 'artifact', title: 'x', url: 'javascript:alert(1)' },
        { type: 'artifact', title: 'x', url: 'https://a.b', metadata: 'm' },
      ]) {
        await t.http.post(base).send(bad).expect(400);
      }
      const w = (await t.http.post(base).send({ type: 'artifact', title: 'x', url: 'https://a.b/c' }).expect(201)).body;
      await t.http.patch(`${base}/${w.id}`).send({ url: null }).expect(422);
      await t.http.get(`/api/issues/${other.id}/work-products/${w.id}`).expect(404);
      const stranger = await insertAgent(t, (await createCompany(t)).id);
      await t.http.get(base).set(agentHeaders(stranger)).expect(404);
      await t.http.post(base).set(agentHeaders(stranger)).send({ type: 'artifact', title: 'x', url: 'https://a.b' }).expect(404);
    });
  });

  describe('GET /api/companies/:companyId/artifacts', () => {
    it('flattens agent-authored documents, attachments and artifact work products into {artifacts, nextCursor}', async () => {
      const c = await createCompany(t);
      const agent = await insertAgent(t, c.id);
      const projectId = await insertProject(t, c.id);
      const issue = await createIssue(t, c.id, { projectId });
      await putDoc(t, issue.id, 'findings', 'agent findings body', { title: 'Findings', headers: agentHeaders(agent) }).expect(201);
      await createDoc(t, issue.id, 'board-notes', 'board only'); // not agent-authored: left out
      const file = (await upload(t, c.id, issue.id, 'shot.png', 'image/png', PNG_1x1, { headers: agentHeaders(agent) }).expect(201)).body;
      const wp = (
        await t.http
          .post(`/api/issues/${issue.id}/work-products`)
          .set(agentHeaders(agent))
          .send({ type: 'artifact', title: 'Report', url: 'https://files.example/report.pdf', summary: 'the report' })
          .expect(201)
      ).body;
      await t.http
        .post(`/api/issues/${issue.id}/work-products`)
        .send({ type: 'pull_request', title: 'PR', url: 'https://x.example/pr' })
        .expect(201);

      const body = await artifacts(c.id);
      expect(body.nextCursor).toBeNull();
      expect(body.artifacts.map((a: { id: string }) => a.id)).toEqual([
        `work_product:${wp.id}`,
        `attachment:${file.id}`,
        expect.stringMatching(/^document:/),
      ]);
      const [w, a, d] = body.artifacts;
      expect(d).toMatchObject({
        source: 'document',
        mediaKind: 'document',
        title: 'Findings',
        previewText: 'agent findings body',
        contentType: 'text/markdown',
        issue: { id: issue.id, identifier: issue.identifier, title: issue.title },
        project: { id: projectId },
        createdByAgent: { id: agent.id, name: agent.name },
        openPath: `/api/issues/${issue.id}/documents/findings`,
      });
      expect(a).toMatchObject({
        source: 'attachment',
        mediaKind: 'image',
        title: 'shot.png',
        contentType: 'image/png',
        contentPath: file.contentPath,
        downloadPath: file.downloadPath,
      });
      expect(w).toMatchObject({
        source: 'work_product',
        mediaKind: 'document',
        title: 'Report',
        previewText: 'the report',
        openPath: wp.url,
        href: wp.url,
      });
      expect(Date.parse(d.updatedAt)).not.toBeNaN();
    });

    it('filters by kind, projectId and q (max 160 characters)', async () => {
      const c = await createCompany(t);
      const agent = await insertAgent(t, c.id);
      const projectId = await insertProject(t, c.id);
      const inProject = await createIssue(t, c.id, { projectId, title: 'Telemetry pipeline' });
      const loose = await createIssue(t, c.id, { title: 'Loose ends' });
      await upload(t, c.id, inProject.id, 'chart.png', 'image/png', PNG_1x1).expect(201);
      await upload(t, c.id, loose.id, 'clip.mp4', 'video/mp4', 'mp4').expect(201);
      await upload(t, c.id, loose.id, 'log.txt', 'text/plain', 'log').expect(201);
      await upload(t, c.id, loose.id, 'bundle.zip', 'application/zip', 'PK').expect(201);
      await putDoc(t, loose.id, 'spec', 'Quarterly telemetry analysis', { headers: agentHeaders(agent), title: 'Spec' }).expect(201);
      const titles = async (query: Record<string, string>) =>
        (await artifacts(c.id, query)).artifacts.map((a: { title: string }) => a.title).sort();
      expect(await titles({ kind: 'image' })).toEqual(['chart.png']);
      expect(await titles({ kind: 'video' })).toEqual(['clip.mp4']);
      expect(await titles({ kind: 'text' })).toEqual(['log.txt']);
      expect(await titles({ kind: 'file' })).toEqual(['bundle.zip']);
      expect(await titles({ kind: 'document' })).toEqual(['Spec']);
      expect((await titles({ kind: 'all' })).length).toBe(5);
      expect(await titles({ projectId })).toEqual(['chart.png']);
      expect(await titles({ q: 'telemetry' })).toEqual(['Spec', 'chart.png']);
      expect(await titles({ q: '100%' })).toEqual([]);
      expect(await titles({ q: 'x'.repeat(160) })).toEqual([]);
      await t.http
        .get(`/api/companies/${c.id}/artifacts`)
        .query({ q: 'x'.repeat(161) })
        .expect(400);
      await t.http.get(`/api/companies/${c.id}/artifacts`).query({ kind: 'audio' }).expect(400);
      await t.http.get(`/api/companies/${c.id}/artifacts`).query({ projectId: 'nope' }).expect(400);
    });

    it('pages with limit 1..100 (default 30) and an opaque cursor; nextCursor null on the last page', async () => {
      const c = await createCompany(t);
      const issue = await createIssue(t, c.id);
      for (let i = 0; i < 5; i++) await upload(t, c.id, issue.id, `f${i}.txt`, 'text/plain', `${i}`).expect(201);
      const seen: string[] = [];
      let cursor: string | null = null;
      let pages = 0;
      do {
        const page: { artifacts: Array<{ id: string }>; nextCursor: string | null } = await artifacts(c.id, {
          limit: 2,
          ...(cursor ? { cursor } : {}),
        });
        seen.push(...page.artifacts.map((a) => a.id));
        cursor = page.nextCursor;
        pages++;
      } while (cursor);
      expect(pages).toBe(3);
      expect(new Set(seen).size).toBe(5);
      expect((await artifacts(c.id, { limit: 5 })).nextCursor).toBeNull();
      for (const limit of ['0', '101', 'x']) await t.http.get(`/api/companies/${c.id}/artifacts`).query({ limit }).expect(400);
      await t.http.get(`/api/companies/${c.id}/artifacts`).query({ cursor: 'garbage' }).expect(400);
      for (let i = 5; i < 32; i++) await upload(t, c.id, issue.id, `g${i}.txt`, 'text/plain', `${i}`).expect(201);
      const first = await artifacts(c.id);
      expect(first.artifacts).toHaveLength(30);
      expect(first.nextCursor).not.toBeNull();
    });

    it('groups by task and by parent task with previews, and expands one group with groupIssueId', async () => {
      const c = await createCompany(t);
      const parent = await createIssue(t, c.id, { title: 'Parent' });
      const childA = await createIssue(t, c.id, { title: 'Child A', parentId: parent.id });
      const childB = await createIssue(t, c.id, { title: 'Child B', parentId: parent.id });
      const solo = await createIssue(t, c.id, { title: 'Solo' });
      for (let i = 0; i < 4; i++) await upload(t, c.id, childA.id, `a${i}.png`, 'image/png', PNG_1x1).expect(201);
      await upload(t, c.id, childB.id, 'b.txt', 'text/plain', 'b').expect(201);
      await upload(t, c.id, solo.id, 's.mp4', 'video/mp4', 's').expect(201);

      const byTask = await artifacts(c.id, { groupBy: 'task' });
      expect(byTask.artifacts).toEqual([]);
      expect(byTask.nextCursor).toBeNull();
      expect(byTask.groups.map((g: { issue: { id: string } }) => g.issue.id)).toEqual([solo.id, childB.id, childA.id]);
      const a = byTask.groups[2];
      expect(a).toMatchObject({ id: `task:${childA.id}`, groupBy: 'task', title: 'Child A', count: 4, mediaKinds: ['image'] });
      expect(a.previewArtifacts).toHaveLength(3);
      expect(a.previewArtifacts[0].title).toBe('a3.png');

      const byParent = await artifacts(c.id, { groupBy: 'parent_task' });
      expect(byParent.groups.map((g: { issue: { id: string }; count: number }) => [g.issue.id, g.count])).toEqual([
        [solo.id, 1],
        [parent.id, 5],
      ]);
      expect(byParent.groups[1].mediaKinds).toEqual(['image', 'text']);

      const paged = await artifacts(c.id, { groupBy: 'task', limit: 2 });
      expect(paged.groups).toHaveLength(2);
      const rest = await artifacts(c.id, { groupBy: 'task', limit: 2, cursor: paged.nextCursor });
      expect(rest.groups.map((g: { issue: { id: string } }) => g.issue.id)).toEqual([childA.id]);
      expect(rest.nextCursor).toBeNull();

      const expanded = await artifacts(c.id, { groupBy: 'parent_task', groupIssueId: parent.id, limit: 3 });
      expect(expanded.artifacts).toHaveLength(3);
      expect(expanded.selectedGroup).toMatchObject({ id: `parent_task:${parent.id}`, count: 5 });
      expect(expanded.nextCursor).not.toBeNull();
      const more = await artifacts(c.id, { groupBy: 'parent_task', groupIssueId: parent.id, limit: 3, cursor: expanded.nextCursor });
      expect(more.artifacts).toHaveLength(2);
      expect(more.nextCursor).toBeNull();
      await t.http.get(`/api/companies/${c.id}/artifacts`).query({ groupBy: 'project' }).expect(400);
    });

    it('leaves out hidden issues and other companies; agents of the company may read, others get 403', async () => {
      const c = await createCompany(t);
      const other = await createCompany(t);
      const issue = await createIssue(t, c.id);
      const hidden = await createIssue(t, c.id);
      const foreign = await createIssue(t, other.id);
      await upload(t, c.id, issue.id, 'a.txt', 'text/plain', 'a').expect(201);
      await upload(t, c.id, hidden.id, 'h.txt', 'text/plain', 'h').expect(201);
      await upload(t, other.id, foreign.id, 'f.txt', 'text/plain', 'f').expect(201);
      await t.http.patch(`/api/issues/${hidden.id}`).send({ hiddenAt: new Date().toISOString() }).expect(200);
      const agent = await insertAgent(t, c.id);
      expect((await artifacts(c.id, {}, agentHeaders(agent))).artifacts.map((a: { title: string }) => a.title)).toEqual(['a.txt']);
      const stranger = await insertAgent(t, other.id);
      await t.http.get(`/api/companies/${c.id}/artifacts`).set(agentHeaders(stranger)).expect(403);
      await t.http.get('/api/companies/00000000-0000-4000-8000-000000000000/artifacts').expect(404);
    });
  });

  describe('authenticated mode', () => {
    let s: TestApp;
    beforeAll(async () => {
      s = await createTestApp({ env: { SERVICE_DEPLOYMENT_MODE: 'authenticated' } });
    });
    afterAll(() => s.close());

    it('answers 401 without credentials on the artifact and work product routes', async () => {
      const c = await insertCompany(s);
      const a = await insertAgent(s, c.id);
      const issue = await createIssue(s, c.id, {}, a.token);
      const w = (
        await s.http
          .post(`/api/issues/${issue.id}/work-products`)
          .set(bearer(a.token))
          .send({ type: 'artifact', title: 'x', url: 'https://a.b' })
          .expect(201)
      ).body;
      await s.http.get(`/api/companies/${c.id}/artifacts`).expect(401);
      await s.http.get(`/api/issues/${issue.id}/work-products`).expect(401);
      await s.http.post(`/api/issues/${issue.id}/work-products`).send({}).expect(401);
      await s.http.patch(`/api/issues/${issue.id}/work-products/${w.id}`).send({}).expect(401);
      await s.http.delete(`/api/issues/${issue.id}/work-products/${w.id}`).expect(401);
    });
  });
});
