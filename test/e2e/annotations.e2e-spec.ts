import { bearer, createCompany } from '../support/factories';
import { activityActions, createDoc, createThread, docPath, latestRevision, putDoc, selectorFor } from '../support/documents';
import { agentHeaders, createIssue, insertAgent, insertCompany, wakeups } from '../support/issues';
import { createTestApp, TestApp } from '../support/test-app';

const TEXT = 'Alpha beta gamma delta. The quick brown fox jumps over the lazy dog. Omega ends here.';

describe('document annotations', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());

  const setup = async (body = TEXT, issueExtra: Record<string, unknown> = {}) => {
    const c = await createCompany(t);
    const issue = await createIssue(t, c.id, issueExtra);
    await createDoc(t, issue.id, 'spec', body);
    return { c, issue, base: `${docPath(issue.id, 'spec')}/annotations` };
  };

  describe('POST /api/issues/:issueId/documents/:key/annotations', () => {
    it('creates an open, active thread carrying its first comment', async () => {
      const { issue, base } = await setup();
      const rev = await latestRevision(t, issue.id, 'spec');
      const res = await t.http
        .post(base)
        .send({
          baseRevisionId: rev.id,
          baseRevisionNumber: rev.number,
          selector: selectorFor(TEXT, 'quick brown fox'),
          body: 'first!',
        })
        .expect(201);
      expect(res.body).toMatchObject({
        status: 'open',
        anchorState: 'active',
        documentKey: 'spec',
        baseRevisionId: rev.id,
        baseRevisionNumber: 1,
        anchorRevisionId: rev.id,
        commentCount: 1,
        resolvedAt: null,
        resolvedByUserId: null,
        createdByUserId: 'local-board',
      });
      expect(res.body.comments).toEqual([expect.objectContaining({ body: 'first!', authorUserId: 'local-board' })]);
      expect(res.body.selector.position).toEqual({ markdownStart: 28, markdownEnd: 43, normalizedStart: 28, normalizedEnd: 43 });
      expect(await activityActions(t, issue.id)).toContain('issue.document_annotation_thread_created');
    });

    it('rejects a stale base revision with 409 naming the current revision', async () => {
      const { issue, base } = await setup();
      const rev1 = await latestRevision(t, issue.id, 'spec');
      const rev2 = (await putDoc(t, issue.id, 'spec', `${TEXT} Appendix.`, { baseRevisionId: rev1.id }).expect(200)).body;
      const res = await t.http
        .post(base)
        .send({ baseRevisionId: rev1.id, baseRevisionNumber: 1, selector: selectorFor(TEXT, 'lazy dog'), body: 'late' })
        .expect(409);
      expect(res.body).toMatchObject({ code: 'stale_revision', currentRevisionId: rev2.latestRevisionId, currentRevisionNumber: 2 });
      // the right id with a wrong number is stale too
      await t.http
        .post(base)
        .send({ baseRevisionId: rev2.latestRevisionId, baseRevisionNumber: 1, selector: selectorFor(TEXT, 'lazy dog'), body: 'x' })
        .expect(409);
    });

    it('rejects a selector that does not match the text with 422', async () => {
      const { issue, base } = await setup();
      const rev = await latestRevision(t, issue.id, 'spec');
      const selector = selectorFor(TEXT, 'quick brown fox');
      selector.quote.exact = 'slow green turtle';
      const res = await t.http.post(base).send({ baseRevisionId: rev.id, baseRevisionNumber: 1, selector, body: 'nope' }).expect(422);
      expect(res.body.code).toBe('selector_mismatch');
    });

    it('accepts stale offsets when the quote is in the text and stores the resolved offsets', async () => {
      const { issue, base } = await setup();
      const rev = await latestRevision(t, issue.id, 'spec');
      const selector = {
        quote: { exact: 'lazy dog' },
        position: { normalizedStart: 0, normalizedEnd: 8, markdownStart: 0, markdownEnd: 8 },
      };
      const res = await t.http.post(base).send({ baseRevisionId: rev.id, baseRevisionNumber: 1, selector, body: 'b' }).expect(201);
      expect(res.body.selector.position.markdownStart).toBe(TEXT.indexOf('lazy dog'));
      expect(res.body.originalSelector).toEqual(selector);
    });

    it('resolves a rendered-text quote on markdown with markup', async () => {
      const body = '# Title\n\nSome **bold claim** here.';
      const { issue, base } = await setup(body);
      const rev = await latestRevision(t, issue.id, 'spec');
      const res = await t.http
        .post(base)
        .send({ baseRevisionId: rev.id, baseRevisionNumber: 1, selector: { quote: { exact: 'bold claim' } }, body: 'src?' })
        .expect(201);
      const p = res.body.selector.position;
      expect(body.slice(p.markdownStart, p.markdownEnd)).toBe('bold claim');
      expect(p.normalizedStart).toBe('Title Some '.length);
    });

    it('validates body length 1..20,000, ids and selector shape with 400', async () => {
      const { issue, base } = await setup();
      const rev = await latestRevision(t, issue.id, 'spec');
      const ok = { baseRevisionId: rev.id, baseRevisionNumber: 1, selector: selectorFor(TEXT, 'beta'), body: 'x' };
      for (const bad of [
        { ...ok, body: '' },
        { ...ok, body: 'x'.repeat(20_001) },
        { ...ok, baseRevisionId: 'nope' },
        { ...ok, baseRevisionNumber: 0 },
        { ...ok, selector: {} },
        { ...ok, selector: { quote: { exact: '' } } },
        { ...ok, selector: { quote: { exact: 'beta' }, position: { markdownStart: -1 } } },
      ]) {
        await t.http.post(base).send(bad).expect(400);
      }
      await t.http
        .post(base)
        .send({ ...ok, body: 'x'.repeat(20_000) })
        .expect(201);
    });

    it('answers 404 for a missing document and for an agent of another company', async () => {
      const { issue, base } = await setup();
      const rev = await latestRevision(t, issue.id, 'spec');
      const payload = { baseRevisionId: rev.id, baseRevisionNumber: 1, selector: selectorFor(TEXT, 'beta'), body: 'x' };
      await t.http
        .post(`${docPath(issue.id, 'missing')}/annotations`)
        .send(payload)
        .expect(404);
      const stranger = await insertAgent(t, (await createCompany(t)).id);
      await t.http.post(base).set(agentHeaders(stranger)).send(payload).expect(404);
      await t.http.get(base).set(agentHeaders(stranger)).expect(404);
    });

    it('wakes the issue assignee on thread creation and replies, but never the acting agent', async () => {
      const c = await createCompany(t);
      const assignee = await insertAgent(t, c.id);
      const other = await insertAgent(t, c.id);
      const issue = await createIssue(t, c.id, { status: 'todo', assigneeAgentId: assignee.id });
      await createDoc(t, issue.id, 'spec', TEXT);
      const before = (await wakeups(t, assignee.id)).length;
      const thread = await createThread(t, issue.id, 'spec', TEXT, 'lazy dog', agentHeaders(other));
      await t.http
        .post(`${docPath(issue.id, 'spec')}/annotations/${thread.id}/comments`)
        .set(agentHeaders(other))
        .send({ body: 'ping' })
        .expect(201);
      const mine = (await wakeups(t, assignee.id)).slice(before);
      expect(mine.map((w) => w.reason)).toEqual(['document_annotation_thread_created', 'document_annotation_comment_added']);
      expect(mine[0]).toMatchObject({
        issue_id: issue.id,
        payload: expect.objectContaining({ issueId: issue.id, threadId: thread.id, documentKey: 'spec' }),
      });
      // the assignee writing itself wakes nobody
      await createThread(t, issue.id, 'spec', TEXT, 'Omega', agentHeaders(assignee));
      await t.http
        .post(`${docPath(issue.id, 'spec')}/annotations/${thread.id}/comments`)
        .set(agentHeaders(assignee))
        .send({ body: 'done' })
        .expect(201);
      expect((await wakeups(t, assignee.id)).length).toBe(before + 2);
      expect(await wakeups(t, other.id)).toEqual([]);
    });
  });

  describe('GET /api/issues/:issueId/documents/:key/annotations', () => {
    it('filters by status open, resolved and all, newest activity first', async () => {
      const { issue, base } = await setup();
      const t1 = await createThread(t, issue.id, 'spec', TEXT, 'quick brown fox');
      const t2 = await createThread(t, issue.id, 'spec', TEXT, 'lazy dog');
      const t3 = await createThread(t, issue.id, 'spec', TEXT, 'Omega');
      await t.http.patch(`${base}/${t1.id}`).send({ status: 'resolved' }).expect(200);
      const ids = async (status?: string) =>
        (
          await t.http
            .get(base)
            .query(status ? { status } : {})
            .expect(200)
        ).body.map((x: { id: string }) => x.id);
      expect(await ids('open')).toEqual([t3.id, t2.id]);
      expect(await ids('resolved')).toEqual([t1.id]);
      expect(await ids('all')).toEqual([t3.id, t2.id, t1.id]);
      expect(await ids()).toEqual([t3.id, t2.id, t1.id]);
      // a reply moves its thread to the front
      await t.http.post(`${base}/${t2.id}/comments`).send({ body: 'bump' }).expect(201);
      expect(await ids('all')).toEqual([t2.id, t3.id, t1.id]);
      await t.http.get(base).query({ status: 'closed' }).expect(400);
    });

    it('includes comments only with includeComments=true', async () => {
      const { issue, base } = await setup();
      const th = await createThread(t, issue.id, 'spec', TEXT, 'beta');
      await t.http.post(`${base}/${th.id}/comments`).send({ body: 'second' }).expect(201);
      expect((await t.http.get(base).expect(200)).body[0].comments).toBeUndefined();
      const withComments = (await t.http.get(base).query({ includeComments: 'true' }).expect(200)).body[0];
      expect(withComments.comments.map((c: { body: string }) => c.body)).toEqual(['on beta', 'second']);
      expect(withComments.commentCount).toBe(2);
    });
  });

  describe('GET /api/issues/:issueId/documents/:key/annotations/:threadId', () => {
    it('returns the thread with comments, 404 when it belongs to another document', async () => {
      const { issue, base } = await setup();
      await createDoc(t, issue.id, 'other', TEXT);
      const th = await createThread(t, issue.id, 'spec', TEXT, 'beta');
      expect((await t.http.get(`${base}/${th.id}`).expect(200)).body.comments).toHaveLength(1);
      await t.http.get(`${docPath(issue.id, 'other')}/annotations/${th.id}`).expect(404);
      await t.http.get(`${base}/00000000-0000-4000-8000-000000000000`).expect(404);
      await t.http.get(`${base}/nope`).expect(404);
      await t.http
        .post(`${docPath(issue.id, 'other')}/annotations/${th.id}/comments`)
        .send({ body: 'x' })
        .expect(404);
      await t.http
        .patch(`${docPath(issue.id, 'other')}/annotations/${th.id}`)
        .send({ status: 'resolved' })
        .expect(404);
    });
  });

  describe('POST /api/issues/:issueId/documents/:key/annotations/:threadId/comments', () => {
    it('adds a reply, bumps lastActivityAt and validates the body', async () => {
      const { issue, base } = await setup();
      const th = await createThread(t, issue.id, 'spec', TEXT, 'beta');
      const reply = await t.http.post(`${base}/${th.id}/comments`).send({ body: 'reply' }).expect(201);
      expect(reply.body).toMatchObject({ threadId: th.id, body: 'reply', authorUserId: 'local-board' });
      const after = (await t.http.get(`${base}/${th.id}`).expect(200)).body;
      expect(Date.parse(after.lastActivityAt)).toBeGreaterThan(Date.parse(th.lastActivityAt));
      await t.http.post(`${base}/${th.id}/comments`).send({ body: '' }).expect(400);
      await t.http
        .post(`${base}/${th.id}/comments`)
        .send({ body: 'x'.repeat(20_001) })
        .expect(400);
      expect(await activityActions(t, issue.id)).toContain('issue.document_annotation_comment_added');
    });
  });

  describe('PATCH /api/issues/:issueId/documents/:key/annotations/:threadId', () => {
    it('resolve stamps resolver and time, reopen clears them, same status is a no-op', async () => {
      const { c, issue, base } = await setup();
      const agent = await insertAgent(t, c.id);
      const th = await createThread(t, issue.id, 'spec', TEXT, 'lazy dog');
      const resolved = (await t.http.patch(`${base}/${th.id}`).set(agentHeaders(agent)).send({ status: 'resolved' }).expect(200)).body;
      expect(resolved).toMatchObject({ status: 'resolved', resolvedByAgentId: agent.id, resolvedByUserId: null });
      expect(Date.parse(resolved.resolvedAt)).not.toBeNaN();
      const again = (await t.http.patch(`${base}/${th.id}`).send({ status: 'resolved' }).expect(200)).body;
      expect(again).toMatchObject({ resolvedAt: resolved.resolvedAt, resolvedByAgentId: agent.id, updatedAt: resolved.updatedAt });
      const reopened = (await t.http.patch(`${base}/${th.id}`).send({ status: 'open' }).expect(200)).body;
      expect(reopened).toMatchObject({ status: 'open', resolvedAt: null, resolvedByAgentId: null, resolvedByUserId: null });
      await t.http.patch(`${base}/${th.id}`).send({ status: 'open' }).expect(200);
      await t.http.patch(`${base}/${th.id}`).send({ status: 'done' }).expect(400);
      const actions = await activityActions(t, issue.id);
      expect(actions.filter((a) => a === 'issue.document_annotation_thread_resolved')).toHaveLength(1);
      expect(actions.filter((a) => a === 'issue.document_annotation_thread_reopened')).toHaveLength(1);
    });
  });

  describe('re-anchoring on new revisions', () => {
    const PASSAGE = 'The quick brown fox jumps over the lazy dog';

    const edit = async (issueId: string, body: string) => {
      const rev = await latestRevision(t, issueId, 'spec');
      await putDoc(t, issueId, 'spec', body, { baseRevisionId: rev.id }).expect(200);
      return latestRevision(t, issueId, 'spec');
    };
    const threadOf = async (base: string, id: string) => (await t.http.get(`${base}/${id}`).expect(200)).body;
    const anchored = (body: string, th: { selector: { position: { markdownStart: number; markdownEnd: number } } }) =>
      body.slice(th.selector.position.markdownStart, th.selector.position.markdownEnd);

    it('stays active after an insertion after the passage', async () => {
      const { issue, base } = await setup();
      const th = await createThread(t, issue.id, 'spec', TEXT, PASSAGE);
      const next = `${TEXT} A new closing sentence.`;
      const rev = await edit(issue.id, next);
      const after = await threadOf(base, th.id);
      expect(after).toMatchObject({ anchorState: 'active', anchorRevisionId: rev.id, anchorRevisionNumber: 2 });
      expect(anchored(next, after)).toBe(PASSAGE);
    });

    it('shifts with updated offsets after an insertion before the passage', async () => {
      const { issue, base } = await setup();
      const th = await createThread(t, issue.id, 'spec', TEXT, PASSAGE);
      const next = `Preface paragraph added. ${TEXT}`;
      await edit(issue.id, next);
      const after = await threadOf(base, th.id);
      expect(after.anchorState).toBe('shifted');
      expect(after.selector.position.markdownStart).toBe(th.selector.position.markdownStart + 'Preface paragraph added. '.length);
      expect(after.selector.position.normalizedStart).toBe(after.selector.position.markdownStart);
      expect(anchored(next, after)).toBe(PASSAGE);
    });

    it('shifts and covers an insertion inside the passage', async () => {
      const { issue, base } = await setup();
      const th = await createThread(t, issue.id, 'spec', TEXT, PASSAGE);
      const next = TEXT.replace('brown fox jumps', 'brown fox swiftly jumps');
      await edit(issue.id, next);
      const after = await threadOf(base, th.id);
      expect(after.anchorState).toBe('shifted');
      expect(anchored(next, after)).toBe('The quick brown fox swiftly jumps over the lazy dog');
      expect(after.selector.quote.exact).toBe('The quick brown fox swiftly jumps over the lazy dog');
    });

    it('orphans when the passage is removed, and re-attaches when it comes back', async () => {
      const { issue, base } = await setup();
      const th = await createThread(t, issue.id, 'spec', TEXT, PASSAGE);
      const rev1 = await latestRevision(t, issue.id, 'spec');
      await edit(issue.id, 'Alpha beta gamma delta. Omega ends here.');
      const orphan = await threadOf(base, th.id);
      expect(orphan).toMatchObject({ anchorState: 'orphaned', anchorRevisionId: rev1.id });
      await t.http.post(`${docPath(issue.id, 'spec')}/revisions/${rev1.id}/restore`).expect(200);
      const back = await threadOf(base, th.id);
      expect(back).toMatchObject({ anchorState: 'active', anchorRevisionNumber: 3 });
      expect(anchored(TEXT, back)).toBe(PASSAGE);
    });

    it('re-anchors resolved threads too, and every thread of the document', async () => {
      const { issue, base } = await setup();
      const a = await createThread(t, issue.id, 'spec', TEXT, 'Alpha beta');
      const b = await createThread(t, issue.id, 'spec', TEXT, 'Omega ends');
      await t.http.patch(`${base}/${a.id}`).send({ status: 'resolved' }).expect(200);
      const next = `Intro. ${TEXT}`;
      await edit(issue.id, next);
      for (const id of [a.id, b.id]) expect((await threadOf(base, id)).anchorState).toBe('shifted');
    });
  });

  describe('GET /api/issues/:issueId/heartbeat-context', () => {
    it('adds planReviewContext with the open threads of the plan document', async () => {
      const c = await createCompany(t);
      const issue = await createIssue(t, c.id);
      expect((await t.http.get(`/api/issues/${issue.id}/heartbeat-context`).expect(200)).body.planReviewContext).toBeUndefined();
      const rev = await createDoc(t, issue.id, 'plan', TEXT);
      const open = await createThread(t, issue.id, 'plan', TEXT, 'lazy dog', {}, 'too vague');
      const done = await createThread(t, issue.id, 'plan', TEXT, 'Omega');
      await t.http
        .patch(`${docPath(issue.id, 'plan')}/annotations/${done.id}`)
        .send({ status: 'resolved' })
        .expect(200);
      const ctx = (await t.http.get(`/api/issues/${issue.id}/heartbeat-context`).expect(200)).body;
      expect(ctx.planReviewContext).toMatchObject({ documentKey: 'plan', latestRevisionId: rev.id, latestRevisionNumber: 1 });
      expect(ctx.planReviewContext.annotationThreads).toEqual([
        expect.objectContaining({ id: open.id, status: 'open', anchorState: 'active', quote: 'lazy dog', comments: ['too vague'] }),
      ]);
    });
  });

  describe('authenticated mode', () => {
    let s: TestApp;
    beforeAll(async () => {
      s = await createTestApp({ env: { SERVICE_DEPLOYMENT_MODE: 'authenticated' } });
    });
    afterAll(() => s.close());

    it('answers 401 without credentials on every annotation route', async () => {
      const c = await insertCompany(s);
      const a = await insertAgent(s, c.id);
      const issue = await createIssue(s, c.id, {}, a.token);
      await s.http.put(docPath(issue.id, 'spec')).set(bearer(a.token)).send({ body: TEXT }).expect(201);
      const base = `${docPath(issue.id, 'spec')}/annotations`;
      const th = (
        await s.http
          .get(`${docPath(issue.id, 'spec')}/revisions`)
          .set(bearer(a.token))
          .expect(200)
      ).body[0];
      const created = await s.http
        .post(base)
        .set(bearer(a.token))
        .send({ baseRevisionId: th.id, baseRevisionNumber: 1, selector: selectorFor(TEXT, 'beta'), body: 'x' })
        .expect(201);
      await s.http.get(base).expect(401);
      await s.http.post(base).send({}).expect(401);
      await s.http.get(`${base}/${created.body.id}`).expect(401);
      await s.http.post(`${base}/${created.body.id}/comments`).send({ body: 'x' }).expect(401);
      await s.http.patch(`${base}/${created.body.id}`).send({ status: 'resolved' }).expect(401);
    });
  });
});
