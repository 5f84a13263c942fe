import { bearer, createCompany } from '../support/factories';
import { activityActions, createDoc, docPath, putDoc } from '../support/documents';
import { agentHeaders, createIssue, insertAgent, insertCompany } from '../support/issues';
import { createTestApp, TestApp } from '../support/test-app';

describe('issue documents', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());

  const setup = async () => {
    const c = await createCompany(t);
    const issue = await createIssue(t, c.id);
    return { c, issue };
  };

  describe('PUT /api/issues/:issueId/documents/:key', () => {
    it('creates with 201 without baseRevisionId, then appends with the latest revision id (200)', async () => {
      const { issue } = await setup();
      const created = await putDoc(t, issue.id, 'notes', 'v1', { title: 'Notes', changeSummary: 'first' }).expect(201);
      expect(created.body).toMatchObject({
        key: 'notes',
        title: 'Notes',
        format: 'markdown',
        body: 'v1',
        changeSummary: 'first',
        latestRevisionNumber: 1,
        issueId: issue.id,
        lockedAt: null,
        lockedByAgentId: null,
        lockedByUserId: null,
        createdByUserId: 'local-board',
      });
      const updated = await putDoc(t, issue.id, 'notes', 'v2', { baseRevisionId: created.body.latestRevisionId }).expect(200);
      expect(updated.body).toMatchObject({ body: 'v2', latestRevisionNumber: 2 });
      expect((await t.http.get(docPath(issue.id, 'notes')).expect(200)).body.body).toBe('v2');
      expect(await activityActions(t, issue.id)).toEqual(expect.arrayContaining(['issue.document_created', 'issue.document_updated']));
    });

    it('accepts the issue identifier in place of its id', async () => {
      const { issue } = await setup();
      await putDoc(t, issue.identifier, 'plan', 'by identifier').expect(201);
      expect((await t.http.get(docPath(issue.id, 'plan')).expect(200)).body.body).toBe('by identifier');
    });

    it('rejects a stale baseRevisionId with 409 naming the current revision', async () => {
      const { issue } = await setup();
      const rev1 = await createDoc(t, issue.id, 'plan', 'v1');
      const r2 = await putDoc(t, issue.id, 'plan', 'v2', { baseRevisionId: rev1.id }).expect(200);
      const res = await putDoc(t, issue.id, 'plan', 'v3', { baseRevisionId: rev1.id }).expect(409);
      expect(res.body).toMatchObject({ code: 'stale_revision', currentRevisionId: r2.body.latestRevisionId, currentRevisionNumber: 2 });
      expect((await t.http.get(docPath(issue.id, 'plan')).expect(200)).body.body).toBe('v2');
    });

    it('rejects a write to an existing key without baseRevisionId with 409', async () => {
      const { issue } = await setup();
      const rev1 = await createDoc(t, issue.id, 'notes', 'v1');
      const res = await putDoc(t, issue.id, 'notes', 'v2').expect(409);
      expect(res.body).toMatchObject({ code: 'base_revision_required', currentRevisionId: rev1.id });
      expect((await t.http.get(`${docPath(issue.id, 'notes')}/revisions`).expect(200)).body).toHaveLength(1);
    });

    it('rejects a baseRevisionId for a key that does not exist yet with 409', async () => {
      const { issue } = await setup();
      const other = await createDoc(t, issue.id, 'other', 'x');
      await putDoc(t, issue.id, 'fresh', 'v1', { baseRevisionId: other.id }).expect(409);
      await t.http.get(docPath(issue.id, 'fresh')).expect(404);
    });

    it('lets exactly one of two concurrent writers on the same base revision win', async () => {
      const { issue } = await setup();
      const base = await createDoc(t, issue.id, 'plan', 'v1');
      const results = await Promise.all(['a', 'b', 'c', 'd'].map((b) => putDoc(t, issue.id, 'plan', b, { baseRevisionId: base.id })));
      const statuses = results.map((r) => r.status).sort();
      expect(statuses).toEqual([200, 409, 409, 409]);
      const revs = (await t.http.get(`${docPath(issue.id, 'plan')}/revisions`).expect(200)).body;
      expect(revs.map((r: { revisionNumber: number }) => r.revisionNumber)).toEqual([2, 1]);
    });

    it('lets exactly one of two concurrent creators of one key win', async () => {
      const { issue } = await setup();
      const results = await Promise.all(['a', 'b'].map((b) => putDoc(t, issue.id, 'spec', b)));
      expect(results.map((r) => r.status).sort()).toEqual([201, 409]);
      expect((await t.http.get(`${docPath(issue.id, 'spec')}/revisions`).expect(200)).body).toHaveLength(1);
    });

    it('rejects keys outside lowercase letters, digits, _ and - with 400', async () => {
      const { issue } = await setup();
      for (const key of ['a%20b', 'a.b', 'plan%24', 'caf%C3%A9', 'Plan', 'x'.repeat(65)]) {
        const res = await putDoc(t, issue.id, key, 'x');
        expect([key, res.status]).toEqual([key, 400]);
      }
      expect((await t.http.get(`/api/issues/${issue.id}/documents`).expect(200)).body).toEqual([]);
      await putDoc(t, issue.id, 'a_b-9', 'ok').expect(201);
    });

    it('rejects a format other than markdown, a missing body and a body over 512 KiB', async () => {
      const { issue } = await setup();
      await t.http.put(docPath(issue.id, 'x')).send({ format: 'html', body: 'x' }).expect(400);
      await t.http.put(docPath(issue.id, 'x')).send({ title: 'x' }).expect(400);
      await putDoc(t, issue.id, 'x', 'a'.repeat(512 * 1024 + 1)).expect(413);
      await putDoc(t, issue.id, 'x', 'a'.repeat(512 * 1024)).expect(201);
    });

    it('answers 404 for an unknown issue and for an agent of another company', async () => {
      const { c, issue } = await setup();
      await putDoc(t, '00000000-0000-4000-8000-000000000000', 'plan', 'x').expect(404);
      await putDoc(t, 'nope', 'plan', 'x').expect(404);
      const other = await createCompany(t);
      const stranger = await insertAgent(t, other.id);
      await putDoc(t, issue.id, 'plan', 'x', { headers: agentHeaders(stranger) }).expect(404);
      await t.http.get(`/api/issues/${issue.id}/documents`).set(agentHeaders(stranger)).expect(404);
      const mine = await insertAgent(t, c.id);
      const res = await putDoc(t, issue.id, 'plan', 'agent plan', { headers: agentHeaders(mine) }).expect(201);
      expect(res.body.createdByAgentId).toBe(mine.id);
    });
  });

  describe('locks', () => {
    it('lock sets lockedAt and the locker; a board write then answers 409 {error, key, lockedAt}', async () => {
      const { issue } = await setup();
      const rev = await createDoc(t, issue.id, 'plan', 'v1');
      const locked = await t.http.post(`${docPath(issue.id, 'plan')}/lock`).expect(200);
      expect(locked.body).toMatchObject({ lockedByUserId: 'local-board', lockedByAgentId: null });
      expect(Date.parse(locked.body.lockedAt)).not.toBeNaN();
      const res = await putDoc(t, issue.id, 'plan', 'v2', { baseRevisionId: rev.id }).expect(409);
      expect(res.body).toMatchObject({ error: 'Document is locked', key: 'plan', lockedAt: locked.body.lockedAt, code: 'document_locked' });
      expect(await activityActions(t, issue.id)).toContain('issue.document_locked');
    });

    it('redirects an agent write to a locked document to plan-2, then plan-3', async () => {
      const { c, issue } = await setup();
      const agent = await insertAgent(t, c.id);
      const rev = await createDoc(t, issue.id, 'plan', 'v1');
      await t.http.post(`${docPath(issue.id, 'plan')}/lock`).expect(200);
      const first = await putDoc(t, issue.id, 'plan', 'agent v2', { baseRevisionId: rev.id, headers: agentHeaders(agent) }).expect(201);
      expect(first.body).toMatchObject({ key: 'plan-2', body: 'agent v2', latestRevisionNumber: 1 });
      expect(first.body.redirectedFromLockedDocument).toMatchObject({
        sourceKey: 'plan',
        key: 'plan-2',
        newKey: 'plan-2',
        lockedByUserId: 'local-board',
      });
      const second = await putDoc(t, issue.id, 'plan', 'agent v3', { headers: agentHeaders(agent) }).expect(201);
      expect(second.body.redirectedFromLockedDocument).toMatchObject({ sourceKey: 'plan', newKey: 'plan-3' });
      expect((await t.http.get(docPath(issue.id, 'plan')).expect(200)).body.body).toBe('v1');
      const keys = (await t.http.get(`/api/issues/${issue.id}/documents`).expect(200)).body.map((d: { key: string }) => d.key);
      expect(keys).toEqual(['plan', 'plan-2', 'plan-3']);
    });

    it('derives the next free key from a locked derived key (plan-2 locked -> plan-3)', async () => {
      const { c, issue } = await setup();
      const agent = await insertAgent(t, c.id);
      await createDoc(t, issue.id, 'plan', 'v1');
      await createDoc(t, issue.id, 'plan-2', 'v1');
      await t.http.post(`${docPath(issue.id, 'plan-2')}/lock`).expect(200);
      const res = await putDoc(t, issue.id, 'plan-2', 'x', { headers: agentHeaders(agent) }).expect(201);
      expect(res.body.key).toBe('plan-3');
    });

    it('unlock clears the lock; locking twice and unlocking an unlocked document are no-ops', async () => {
      const { issue } = await setup();
      const rev = await createDoc(t, issue.id, 'plan', 'v1');
      const a = await t.http.post(`${docPath(issue.id, 'plan')}/lock`).expect(200);
      const b = await t.http.post(`${docPath(issue.id, 'plan')}/lock`).expect(200);
      expect(b.body.lockedAt).toBe(a.body.lockedAt);
      const u = await t.http.post(`${docPath(issue.id, 'plan')}/unlock`).expect(200);
      expect(u.body).toMatchObject({ lockedAt: null, lockedByAgentId: null, lockedByUserId: null });
      await t.http.post(`${docPath(issue.id, 'plan')}/unlock`).expect(200);
      await putDoc(t, issue.id, 'plan', 'v2', { baseRevisionId: rev.id }).expect(200);
      const actions = await activityActions(t, issue.id);
      expect(actions.filter((x) => x === 'issue.document_locked')).toHaveLength(1);
      expect(actions.filter((x) => x === 'issue.document_unlocked')).toHaveLength(1);
    });

    it('lets an agent unlock only its own lock', async () => {
      const { c, issue } = await setup();
      const a1 = await insertAgent(t, c.id);
      const a2 = await insertAgent(t, c.id);
      await createDoc(t, issue.id, 'plan', 'v1');
      const locked = await t.http
        .post(`${docPath(issue.id, 'plan')}/lock`)
        .set(agentHeaders(a1))
        .expect(200);
      expect(locked.body.lockedByAgentId).toBe(a1.id);
      await t.http
        .post(`${docPath(issue.id, 'plan')}/unlock`)
        .set(agentHeaders(a2))
        .expect(403);
      await t.http
        .post(`${docPath(issue.id, 'plan')}/unlock`)
        .set(agentHeaders(a1))
        .expect(200);
    });

    it('answers 404 when locking a missing document', async () => {
      const { issue } = await setup();
      await t.http.post(`${docPath(issue.id, 'nothing')}/lock`).expect(404);
    });
  });

  describe('GET /api/issues/:issueId/documents/:key', () => {
    it('gives agents the annotation threads by default; includeAnnotations=false opts out; boards opt in', async () => {
      const { c, issue } = await setup();
      const agent = await insertAgent(t, c.id);
      const body = 'Alpha beta gamma delta.';
      const rev = await createDoc(t, issue.id, 'spec', body);
      await t.http
        .post(`${docPath(issue.id, 'spec')}/annotations`)
        .send({
          baseRevisionId: rev.id,
          baseRevisionNumber: 1,
          body: 'why?',
          selector: { quote: { exact: 'beta' }, position: { normalizedStart: 6, normalizedEnd: 10, markdownStart: 6, markdownEnd: 10 } },
        })
        .expect(201);
      const asAgent = await t.http.get(docPath(issue.id, 'spec')).set(agentHeaders(agent)).expect(200);
      expect(asAgent.body.annotations).toHaveLength(1);
      expect(asAgent.body.annotations[0].comments).toBeUndefined();
      const withComments = await t.http
        .get(docPath(issue.id, 'spec'))
        .query({ includeAnnotationComments: 'true' })
        .set(agentHeaders(agent))
        .expect(200);
      expect(withComments.body.annotations[0].comments.map((x: { body: string }) => x.body)).toEqual(['why?']);
      const optOut = await t.http
        .get(docPath(issue.id, 'spec'))
        .query({ includeAnnotations: 'false' })
        .set(agentHeaders(agent))
        .expect(200);
      expect(optOut.body.annotations).toBeUndefined();
      expect((await t.http.get(docPath(issue.id, 'spec')).expect(200)).body.annotations).toBeUndefined();
      expect((await t.http.get(docPath(issue.id, 'spec')).query({ includeAnnotations: 'true' }).expect(200)).body.annotations).toHaveLength(
        1,
      );
      await t.http.get(docPath(issue.id, 'spec')).query({ includeAnnotations: 'maybe' }).expect(400);
    });

    it('answers 404 for a missing key and 400 for an invalid one', async () => {
      const { issue } = await setup();
      await t.http.get(docPath(issue.id, 'none')).expect(404);
      await t.http.get(docPath(issue.id, 'No.pe')).expect(400);
    });
  });

  describe('revisions and restore', () => {
    it('lists revisions newest first and restore creates a new latest revision keeping history', async () => {
      const { issue } = await setup();
      const rev1 = await createDoc(t, issue.id, 'notes', 'v1');
      const rev2 = (await putDoc(t, issue.id, 'notes', 'v2', { baseRevisionId: rev1.id, title: 'Second' }).expect(200)).body;
      const restored = await t.http.post(`${docPath(issue.id, 'notes')}/revisions/${rev1.id}/restore`).expect(200);
      expect(restored.body).toMatchObject({ body: 'v1', latestRevisionNumber: 3, title: 'Doc' });
      const revs = (await t.http.get(`${docPath(issue.id, 'notes')}/revisions`).expect(200)).body;
      expect(revs.map((r: { id: string }) => r.id).slice(1)).toEqual([rev2.latestRevisionId, rev1.id]);
      expect(revs[0]).toMatchObject({ revisionNumber: 3, body: 'v1', restoredFromRevisionId: rev1.id });
      expect(await activityActions(t, issue.id)).toContain('issue.document_restored');
    });

    it('answers 404 for a revision of another document and 409 on a locked document', async () => {
      const { issue } = await setup();
      const a = await createDoc(t, issue.id, 'a', 'a1');
      await createDoc(t, issue.id, 'b', 'b1');
      await t.http.post(`${docPath(issue.id, 'b')}/revisions/${a.id}/restore`).expect(404);
      await t.http.post(`${docPath(issue.id, 'b')}/revisions/nope/restore`).expect(404);
      await t.http.post(`${docPath(issue.id, 'a')}/lock`).expect(200);
      await t.http.post(`${docPath(issue.id, 'a')}/revisions/${a.id}/restore`).expect(409);
    });
  });

  describe('DELETE /api/issues/:issueId/documents/:key', () => {
    it('is board-only, 409 when locked, and removes all revisions', async () => {
      const { c, issue } = await setup();
      const agent = await insertAgent(t, c.id);
      await createDoc(t, issue.id, 'notes', 'keep');
      await t.http.delete(docPath(issue.id, 'notes')).set(agentHeaders(agent)).expect(403);
      await t.http.post(`${docPath(issue.id, 'notes')}/lock`).expect(200);
      const locked = await t.http.delete(docPath(issue.id, 'notes')).expect(409);
      expect(locked.body).toMatchObject({ error: 'Document is locked', key: 'notes' });
      await t.http.post(`${docPath(issue.id, 'notes')}/unlock`).expect(200);
      await t.http.delete(docPath(issue.id, 'notes')).expect(200);
      await t.http.get(docPath(issue.id, 'notes')).expect(404);
      const left = await t.dataSource.query(
        `SELECT count(*)::int AS n FROM issue_document_revisions r JOIN issue_documents d ON d.id = r.document_id WHERE d.issue_id = $1`,
        [issue.id],
      );
      expect(left[0].n).toBe(0);
      expect(await activityActions(t, issue.id)).toContain('issue.document_deleted');
    });
  });

  describe('GET /api/issues/:issueId', () => {
    it('fills planDocument and documentSummaries', async () => {
      const { issue } = await setup();
      expect((await t.http.get(`/api/issues/${issue.id}`).expect(200)).body).toMatchObject({ planDocument: null, documentSummaries: [] });
      await createDoc(t, issue.id, 'plan', '# The plan');
      await createDoc(t, issue.id, 'notes', 'n');
      const res = await t.http.get(`/api/issues/${issue.id}`).expect(200);
      expect(res.body.planDocument).toMatchObject({ key: 'plan', body: '# The plan', latestRevisionNumber: 1 });
      expect(res.body.documentSummaries.map((d: { key: string }) => d.key)).toEqual(['notes', 'plan']);
    });
  });

  describe('authenticated mode', () => {
    let s: TestApp;
    beforeAll(async () => {
      s = await createTestApp({ env: { SERVICE_DEPLOYMENT_MODE: 'authenticated' } });
    });
    afterAll(() => s.close());

    it('answers 401 without credentials on every document route', async () => {
      const c = await insertCompany(s);
      const a = await insertAgent(s, c.id);
      const issue = await createIssue(s, c.id, {}, a.token);
      await s.http.put(docPath(issue.id, 'plan')).set(bearer(a.token)).send({ body: 'x' }).expect(201);
      const p = docPath(issue.id, 'plan');
      await s.http.get(`/api/issues/${issue.id}/documents`).expect(401);
      await s.http.get(p).expect(401);
      await s.http.put(p).send({ body: 'y' }).expect(401);
      await s.http.post(`${p}/lock`).expect(401);
      await s.http.post(`${p}/unlock`).expect(401);
      await s.http.get(`${p}/revisions`).expect(401);
      await s.http.delete(p).expect(401);
    });
  });
});
