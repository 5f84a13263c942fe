import { randomUUID } from 'node:crypto';
import { bearer, createCompany } from '../support/factories';
import { agentHeaders, createIssue, insertAgent, insertCompany, wakeups } from '../support/issues';
import { createTestApp, TestApp } from '../support/test-app';

describe('comments', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());

  const post = (issueId: string, body: Record<string, unknown>, headers: Record<string, string> = {}) =>
    t.http.post(`/api/issues/${issueId}/comments`).set(headers).send(body);
  const list = async (issueId: string, query: Record<string, string> = {}) =>
    (await t.http.get(`/api/issues/${issueId}/comments`).query(query).expect(200)).body as Array<{ id: string; body: string }>;

  describe('POST /api/issues/:issueId/comments', () => {
    it('creates a markdown comment, readable by id; records issue.comment_added; bumps updatedAt', async () => {
      const c = await createCompany(t);
      const issue = await createIssue(t, c.id);
      const res = await post(issue.identifier, { body: '**hello**' }).expect(201);
      expect(res.body).toMatchObject({
        issueId: issue.id,
        companyId: c.id,
        body: '**hello**',
        authorUserId: 'local-board',
        authorAgentId: null,
      });
      const one = await t.http.get(`/api/issues/${issue.id}/comments/${res.body.id}`).expect(200);
      expect(one.body).toEqual(res.body);
      const activity = (await t.http.get(`/api/issues/${issue.id}/activity`).expect(200)).body;
      expect(activity[0]).toMatchObject({
        action: 'issue.comment_added',
        entityId: issue.id,
        details: expect.objectContaining({ commentId: res.body.id }),
      });
      expect(Date.parse((await t.http.get(`/api/issues/${issue.id}`).expect(200)).body.updatedAt)).toBeGreaterThan(
        Date.parse(issue.updatedAt as string),
      );
    });

    it('rejects an empty or missing body with 400; unknown issue 404, and for an agent of another company', async () => {
      const c = await createCompany(t);
      const issue = await createIssue(t, c.id);
      await post(issue.id, {}).expect(400);
      await post(issue.id, { body: '' }).expect(400);
      await post(issue.id, { body: 'x', reopen: 'yes' }).expect(400);
      await post(randomUUID(), { body: 'x' }).expect(404);
      const stranger = await insertAgent(t, (await createCompany(t)).id);
      await post(issue.id, { body: 'x' }, bearer(stranger.token)).expect(404);
      await t.http.get(`/api/issues/${issue.id}/comments`).set(bearer(stranger.token)).expect(404);
      expect(await list(issue.id)).toEqual([]);
    });

    it('reopen moves done or cancelled to todo; it does nothing on open issues; closed issues accept comments', async () => {
      const c = await createCompany(t);
      const done = await createIssue(t, c.id, { status: 'done' });
      await post(done.id, { body: 'redo', reopen: true }).expect(201);
      expect((await t.http.get(`/api/issues/${done.id}`).expect(200)).body.status).toBe('todo');
      const cancelled = await createIssue(t, c.id, { status: 'cancelled' });
      await post(cancelled.id, { body: 'late note' }).expect(201);
      expect((await t.http.get(`/api/issues/${cancelled.id}`).expect(200)).body.status).toBe('cancelled');
      const review = await createIssue(t, c.id, { status: 'in_review' });
      await post(review.id, { body: 'x', reopen: true }).expect(201);
      expect((await t.http.get(`/api/issues/${review.id}`).expect(200)).body.status).toBe('in_review');
    });
  });

  describe('GET /api/issues/:issueId/comments', () => {
    it('orders asc by default or desc; continues after a comment; limit positive and capped at 500', async () => {
      const c = await createCompany(t);
      const issue = await createIssue(t, c.id);
      const made: string[] = [];
      for (let i = 0; i < 5; i++) made.push((await post(issue.id, { body: `c${i}` }).expect(201)).body.id);
      expect((await list(issue.id)).map((x) => x.id)).toEqual(made);
      expect((await list(issue.id, { order: 'asc' })).map((x) => x.id)).toEqual(made);
      expect((await list(issue.id, { order: 'desc' })).map((x) => x.id)).toEqual([...made].reverse());
      expect((await list(issue.id, { after: made[1] })).map((x) => x.id)).toEqual(made.slice(2));
      expect((await list(issue.id, { afterCommentId: made[3] })).map((x) => x.id)).toEqual([made[4]]);
      expect((await list(issue.id, { limit: '2' })).map((x) => x.id)).toEqual(made.slice(0, 2));
      expect((await list(issue.id, { limit: '100000' })).length).toBe(5);
      for (const bad of ['limit=0', 'limit=-2', 'limit=x', 'order=up', 'after=nope'])
        await t.http.get(`/api/issues/${issue.id}/comments?${bad}`).expect(400);
      const other = await createIssue(t, c.id);
      await t.http.get(`/api/issues/${other.id}/comments?after=${made[0]}`).expect(400);
      await t.http.get(`/api/issues/${other.id}/comments/${made[0]}`).expect(404);
      await t.http.get(`/api/issues/${issue.id}/comments/nope`).expect(404);
    });

    it('caps a page at 500 comments', async () => {
      const c = await createCompany(t);
      const issue = await createIssue(t, c.id);
      await t.dataSource.query(
        `INSERT INTO issue_comments (company_id, issue_id, body, author_user_id) SELECT $1, $2, 'bulk ' || g, 'u' FROM generate_series(1, 510) g`,
        [c.id, issue.id],
      );
      expect((await list(issue.id)).length).toBe(500);
      expect((await list(issue.id, { limit: '501' })).length).toBe(500);
    });
  });

  describe('wakeups', () => {
    it("a comment wakes the assignee; the assignee's own comment does not wake itself", async () => {
      const c = await createCompany(t);
      const a = await insertAgent(t, c.id);
      const issue = await createIssue(t, c.id, { assigneeAgentId: a.id });
      const res = await post(issue.id, { body: 'please look' }).expect(201);
      expect(await wakeups(t, a.id)).toEqual([
        expect.objectContaining({
          source: 'automation',
          trigger_detail: 'system',
          reason: 'issue_commented',
          issue_id: issue.id,
          payload: { issueId: issue.id, commentId: res.body.id },
        }),
      ]);
      await post(issue.id, { body: 'on it' }, bearer(a.token)).expect(201);
      expect(await wakeups(t, a.id)).toHaveLength(1);
    });

    it('a comment on a closed issue wakes the assignee only when it reopens the issue', async () => {
      const c = await createCompany(t);
      const a = await insertAgent(t, c.id);
      const issue = await createIssue(t, c.id, { status: 'done' });
      await t.dataSource.query(`UPDATE issues SET assignee_agent_id = $1 WHERE id = $2`, [a.id, issue.id]);
      await post(issue.id, { body: 'thanks' }).expect(201);
      expect(await wakeups(t, a.id)).toEqual([]);
      await post(issue.id, { body: 'one more thing', reopen: true }).expect(201);
      expect(await wakeups(t, a.id)).toHaveLength(1);
    });

    it('@AgentName mentions (case-insensitive, exact name) wake that agent once; not inside words or e-mails', async () => {
      const c = await createCompany(t);
      const alice = await insertAgent(t, c.id, { name: 'Alice Bot' });
      const bob = await insertAgent(t, c.id, { name: 'Bob' });
      const bobby = await insertAgent(t, c.id, { name: 'Bobby' });
      const gone = await insertAgent(t, c.id, { name: 'Ghost', status: 'terminated' });
      const assignee = await insertAgent(t, c.id);
      const issue = await createIssue(t, c.id, { status: 'todo', assigneeAgentId: assignee.id });
      const before = (await wakeups(t, assignee.id)).length;
      await post(issue.id, {
        body: `hey @alice bot and @BOB, also @bob again, mail x@bobby.com, @ghost, @${assignee.name.toUpperCase()}`,
      }).expect(201);
      expect(await wakeups(t, alice.id)).toEqual([expect.objectContaining({ reason: 'mentioned', issue_id: issue.id })]);
      expect(await wakeups(t, bob.id)).toHaveLength(1);
      expect(await wakeups(t, bobby.id)).toEqual([]);
      expect(await wakeups(t, gone.id)).toEqual([]);
      const assigneeWakes = await wakeups(t, assignee.id);
      expect(assigneeWakes).toHaveLength(before + 1);
      expect(assigneeWakes[assigneeWakes.length - 1].reason).toBe('mentioned');
    });

    it('an agent mentioning itself is not woken; mentions in a PATCH comment wake too', async () => {
      const c = await createCompany(t);
      const a = await insertAgent(t, c.id, { name: 'Solo' });
      const peer = await insertAgent(t, c.id, { name: 'Peer' });
      const issue = await createIssue(t, c.id);
      await post(issue.id, { body: 'note to @Solo' }, bearer(a.token)).expect(201);
      expect(await wakeups(t, a.id)).toEqual([]);
      await t.http.patch(`/api/issues/${issue.id}`).set(agentHeaders(a)).send({ comment: 'cc @peer' }).expect(200);
      expect(await wakeups(t, peer.id)).toEqual([expect.objectContaining({ reason: 'mentioned' })]);
    });
  });

  describe('authenticated mode', () => {
    let s: TestApp;
    beforeAll(async () => {
      s = await createTestApp({ env: { SERVICE_DEPLOYMENT_MODE: 'authenticated' } });
    });
    afterAll(() => s.close());

    it('answers 401 without credentials', async () => {
      const c = await insertCompany(s);
      const a = await insertAgent(s, c.id);
      const issue = (await s.http.post(`/api/companies/${c.id}/issues`).set(agentHeaders(a)).send({ title: 'x' }).expect(201)).body;
      await s.http.post(`/api/issues/${issue.id}/comments`).send({ body: 'x' }).expect(401);
      await s.http.get(`/api/issues/${issue.id}/comments`).expect(401);
      await s.http.post(`/api/issues/${issue.id}/comments`).set(agentHeaders(a)).send({ body: 'x' }).expect(201);
    });
  });
});
