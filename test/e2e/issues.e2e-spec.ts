import { randomUUID } from 'node:crypto';
import { Client } from 'pg';
import { WorkCancellation, CancellationScope } from '../../src/common/events/work-cancellation.port';
import { bearer, createCompany } from '../support/factories';
import { agentHeaders, createIssue, insertAgent, insertCompany, insertGoal, insertProject, wakeups } from '../support/issues';
import { waitFor } from '../support/heartbeat';
import { createTestApp, TestApp } from '../support/test-app';
import { tmpPath } from '../support/tmp';

describe('issues', () => {
  let t: TestApp;
  const cancelled: Array<{ scope: CancellationScope; reason: string }> = [];
  beforeAll(async () => {
    t = await createTestApp();
    t.app.get(WorkCancellation).register(async (scope, reason) => {
      cancelled.push({ scope, reason });
    });
  });
  afterAll(() => t.close());

  const ids = async (companyId: string, query: Record<string, string> = {}, headers: Record<string, string> = {}) => {
    const res = await t.http.get(`/api/companies/${companyId}/issues`).query(query).set(headers).expect(200);
    return (res.body as Array<{ id: string }>).map((i) => i.id);
  };

  describe('POST /api/companies/:companyId/issues', () => {
    it('creates with defaults backlog/medium and identifier <PREFIX>-<n>', async () => {
      const c = await createCompany(t);
      const a = await createIssue(t, c.id);
      const b = await createIssue(t, c.id, { status: 'todo', priority: 'high' });
      expect(a).toMatchObject({
        status: 'backlog',
        priority: 'medium',
        identifier: `${c.issuePrefix}-1`,
        issueNumber: 1,
        companyId: c.id,
        labelIds: [],
        blockedByIssueIds: [],
        originKind: 'manual',
        hiddenAt: null,
        assigneeAgentId: null,
        checkoutRunId: null,
        createdByUserId: 'local-board',
      });
      expect(b).toMatchObject({ status: 'todo', priority: 'high', identifier: `${c.issuePrefix}-2` });
      expect((await t.http.get(`/api/companies/${c.id}`).expect(200)).body.issueCounter).toBe(3);
      expect((await t.http.get('/api/companies/stats').expect(200)).body[c.id].issueCount).toBe(2);
    });

    it('keeps identifiers unique and gap-free under 50 concurrent creates', async () => {
      const c = await createCompany(t);
      const res = await Promise.all(
        Array.from({ length: 50 }, (_, i) => t.http.post(`/api/companies/${c.id}/issues`).send({ title: `c${i}` })),
      );
      expect(res.map((r) => r.status).every((s) => s === 201)).toBe(true);
      const numbers = res.map((r) => r.body.issueNumber).sort((x, y) => x - y);
      expect(numbers).toEqual(Array.from({ length: 50 }, (_, i) => i + 1));
      expect(new Set(res.map((r) => r.body.identifier)).size).toBe(50);
    });

    it('rejects bad input with 400 and creates nothing', async () => {
      const c = await createCompany(t);
      for (const body of [
        {},
        { title: '' },
        { title: 'x', status: 'open' },
        { title: 'x', priority: 'urgent' },
        { title: 'x', projectId: 'nope' },
        { title: 'x', labelIds: ['nope'] },
        { title: 'x', blockedByIssueIds: 'a' },
        { title: 'x', hiddenAt: 'yesterday' },
        { title: 'x', executionPolicy: 'strict' },
      ]) {
        await t.http.post(`/api/companies/${c.id}/issues`).send(body).expect(400);
      }
      expect(await ids(c.id)).toEqual([]);
      expect((await t.http.get(`/api/companies/${c.id}`).expect(200)).body.issueCounter).toBe(1);
    });

    it('rejects placement in another company with 422 (project, goal, parent, blockers, labels)', async () => {
      const c = await createCompany(t);
      const other = await createCompany(t);
      const foreignIssue = await createIssue(t, other.id);
      const label = (await t.http.post(`/api/companies/${other.id}/labels`).send({ name: 'x' }).expect(201)).body;
      for (const body of [
        { projectId: await insertProject(t, other.id) },
        { goalId: await insertGoal(t, other.id) },
        { parentId: foreignIssue.id },
        { blockedByIssueIds: [foreignIssue.identifier] },
        { labelIds: [label.id] },
        { inheritExecutionWorkspaceFromIssueId: foreignIssue.id },
      ]) {
        const res = await t.http.post(`/api/companies/${c.id}/issues`).send({ title: 'x', ...body });
        expect([res.status, Object.keys(body)[0]]).toEqual([422, Object.keys(body)[0]]);
      }
      expect(await ids(c.id)).toEqual([]);
    });

    it('refuses an assignee of another company, or a terminated or pending one, with 403 deny_company_boundary (board and agents)', async () => {
      const c = await createCompany(t);
      const other = await createCompany(t);
      const ceo = await insertAgent(t, c.id, { role: 'ceo' });
      const targets = [
        (await insertAgent(t, other.id)).id,
        (await insertAgent(t, c.id, { status: 'terminated' })).id,
        (await insertAgent(t, c.id, { status: 'pending_approval' })).id,
        randomUUID(),
      ];
      const existing = await createIssue(t, c.id);
      for (const assigneeAgentId of targets) {
        for (const req of [
          t.http.post(`/api/companies/${c.id}/issues`).send({ title: 'x', assigneeAgentId }),
          t.http.post(`/api/companies/${c.id}/issues`).set(bearer(ceo.token)).send({ title: 'x', assigneeAgentId }),
          t.http.patch(`/api/issues/${existing.id}`).send({ assigneeAgentId }),
        ]) {
          const res = await req;
          expect([res.status, res.body.code, res.body.reason]).toEqual([403, 'forbidden', 'deny_company_boundary']);
        }
      }
      expect(await ids(c.id)).toEqual([existing.id]);
    });

    it('accepts an active agent of the company as assignee, waking it', async () => {
      const c = await createCompany(t);
      const a = await insertAgent(t, c.id);
      const issue = await createIssue(t, c.id, { status: 'todo', assigneeAgentId: a.id, assigneeUserId: 'user-1' });
      expect(issue).toMatchObject({ assigneeAgentId: a.id, assigneeUserId: 'user-1' });
      expect(await wakeups(t, a.id)).toEqual([
        expect.objectContaining({ source: 'assignment', issue_id: issue.id, payload: { issueId: issue.id } }),
      ]);
      const backlog = await insertAgent(t, c.id);
      await createIssue(t, c.id, { assigneeAgentId: backlog.id });
      expect(await wakeups(t, backlog.id)).toEqual([]);
    });

    it('sends assignment through the authorization decision: a plain agent is denied with a reason, a CEO agent allowed', async () => {
      const c = await createCompany(t);
      const worker = await insertAgent(t, c.id);
      const plain = await insertAgent(t, c.id);
      const res = await t.http
        .post(`/api/companies/${c.id}/issues`)
        .set(bearer(plain.token))
        .send({ title: 'x', assigneeAgentId: worker.id })
        .expect(403);
      expect(res.body.reason).toMatch(/^deny_/);
      const self = await t.http
        .post(`/api/companies/${c.id}/issues`)
        .set(bearer(plain.token))
        .send({ title: 'mine', assigneeAgentId: plain.id })
        .expect(201);
      expect(self.body.createdByAgentId).toBe(plain.id);
      const ceo = await insertAgent(t, c.id, { role: 'ceo' });
      await t.http
        .post(`/api/companies/${c.id}/issues`)
        .set(bearer(ceo.token))
        .send({ title: 'x', assigneeAgentId: worker.id })
        .expect(201);
    });

    it('stores execution fields, origin and labels; inherits workspace settings from another issue', async () => {
      const c = await createCompany(t);
      const label = (await t.http.post(`/api/companies/${c.id}/labels`).send({ name: 'Bug', color: '#FF0000' }).expect(201)).body;
      // a workspace of the company (an unknown id is refused like another company's: invalid_reference)
      const [{ id: ws }] = await t.dataSource.query(
        `INSERT INTO project_workspaces (company_id, project_id, name, source_type, cwd) VALUES ($1, $2, 'w', 'local_path', $3) RETURNING id`,
        [c.id, await insertProject(t, c.id), tmpPath('w')],
      );
      const src = await createIssue(t, c.id, {
        executionPolicy: { mode: 'review' },
        executionWorkspaceId: ws,
        executionWorkspacePreference: 'isolated',
        executionWorkspaceSettings: { branch: 'x' },
        originKind: 'routine_execution',
        originId: 'r1',
        labelIds: [label.id],
      });
      expect(src).toMatchObject({
        executionPolicy: { mode: 'review' },
        executionWorkspaceId: ws,
        executionWorkspacePreference: 'isolated',
        executionWorkspaceSettings: { branch: 'x' },
        originKind: 'routine_execution',
        originId: 'r1',
        labelIds: [label.id],
        labels: [{ id: label.id, name: 'Bug', color: '#ff0000' }],
      });
      const copy = await createIssue(t, c.id, {
        inheritExecutionWorkspaceFromIssueId: src.identifier,
        executionWorkspacePreference: 'shared',
      });
      expect(copy).toMatchObject({
        inheritExecutionWorkspaceFromIssueId: src.id,
        executionWorkspaceId: ws,
        executionWorkspacePreference: 'shared',
        executionWorkspaceSettings: { branch: 'x' },
      });
    });

    it('answers 404 for an unknown company and 403 for an agent of another company', async () => {
      await t.http.post(`/api/companies/${randomUUID()}/issues`).send({ title: 'x' }).expect(404);
      const c = await createCompany(t);
      const other = await createCompany(t);
      const a = await insertAgent(t, other.id);
      await t.http.post(`/api/companies/${c.id}/issues`).set(bearer(a.token)).send({ title: 'x' }).expect(403);
      await t.http.get(`/api/companies/${c.id}/issues`).set(bearer(a.token)).expect(403);
    });
  });

  describe('GET /api/companies/:companyId/issues', () => {
    it('filters by status (one or comma-separated), assignee, project, parent, label and rejects unknown statuses', async () => {
      const c = await createCompany(t);
      const a = await insertAgent(t, c.id);
      const p = await insertProject(t, c.id);
      const label = (await t.http.post(`/api/companies/${c.id}/labels`).send({ name: 'L' }).expect(201)).body;
      const todo = await createIssue(t, c.id, { status: 'todo', assigneeAgentId: a.id });
      const done = await createIssue(t, c.id, { status: 'done', projectId: p, labelIds: [label.id] });
      const child = await createIssue(t, c.id, { parentId: todo.id, assigneeUserId: 'u1' });
      await createIssue(t, c.id, { parentId: child.id });
      expect(await ids(c.id, { status: 'todo' })).toEqual([todo.id]);
      expect((await ids(c.id, { status: 'todo,done' })).sort()).toEqual([todo.id, done.id].sort());
      expect(await ids(c.id, { assigneeAgentId: a.id })).toEqual([todo.id]);
      expect(await ids(c.id, { participantAgentId: a.id })).toEqual([todo.id]);
      expect(await ids(c.id, { projectId: p })).toEqual([done.id]);
      expect(await ids(c.id, { parentId: todo.id })).toEqual([child.id]);
      expect(await ids(c.id, { labelId: label.id })).toEqual([done.id]);
      expect(await ids(c.id, { assigneeUserId: 'u1' })).toEqual([child.id]);
      await t.http.get(`/api/companies/${c.id}/issues?status=todo,open`).expect(400);
      await t.http.get(`/api/companies/${c.id}/issues?projectId=nope`).expect(400);
    });

    it('orders by priority (critical first, then newest)', async () => {
      const c = await createCompany(t);
      const low = await createIssue(t, c.id, { priority: 'low' });
      const med1 = await createIssue(t, c.id);
      const crit = await createIssue(t, c.id, { priority: 'critical' });
      const med2 = await createIssue(t, c.id);
      const high = await createIssue(t, c.id, { priority: 'high' });
      expect(await ids(c.id)).toEqual([crit.id, high.id, med2.id, med1.id, low.id]);
    });

    it('limit must be a positive integer; pages continue with the X-Next-Cursor header without gaps or repeats', async () => {
      const c = await createCompany(t);
      const all: string[] = [];
      for (let i = 0; i < 7; i++) all.push((await createIssue(t, c.id, { priority: i % 2 ? 'high' : 'low' })).id);
      for (const bad of ['0', '-1', '1.5', 'abc']) await t.http.get(`/api/companies/${c.id}/issues?limit=${bad}`).expect(400);
      const seen: string[] = [];
      let cursor: string | undefined;
      for (let page = 0; page < 5; page++) {
        const res = await t.http
          .get(`/api/companies/${c.id}/issues`)
          .query({ limit: '3', ...(cursor ? { cursor } : {}) })
          .expect(200);
        seen.push(...res.body.map((i: { id: string }) => i.id));
        cursor = res.headers['x-next-cursor'];
        if (!cursor) break;
      }
      expect(seen).toEqual(await ids(c.id));
      expect(seen.sort()).toEqual(all.sort());
      await t.http.get(`/api/companies/${c.id}/issues?cursor=garbage`).expect(400);
    });

    it('q finds title, identifier, description and comment matches, best match first, and drops the rest', async () => {
      const c = await createCompany(t);
      const tok = `zq${randomUUID().slice(0, 8)}`;
      const byTitle = await createIssue(t, c.id, { title: `${tok} in the title` });
      const byDesc = await createIssue(t, c.id, { title: 'other', description: `the ${tok} sits here` });
      const byComment = await createIssue(t, c.id, { title: 'third' });
      await t.http
        .post(`/api/issues/${byComment.id}/comments`)
        .send({ body: `a comment about ${tok}` })
        .expect(201);
      const none = await createIssue(t, c.id, { title: 'nothing' });
      const found = await ids(c.id, { q: tok });
      expect([...found].sort()).toEqual([byTitle.id, byDesc.id, byComment.id].sort());
      expect(found[0]).toBe(byTitle.id);
      expect((await ids(c.id, { q: none.identifier }))[0]).toBe(none.id);
      expect((await ids(c.id, { q: none.identifier.toLowerCase() }))[0]).toBe(none.id);
      expect(await ids(c.id, { q: 'nothin' })).toEqual([none.id]);
      expect(await ids(c.id, { q: '&|!:*' })).toEqual([]);
      // quotes, backslashes and tsquery syntax are words, never query syntax
      expect(await ids(c.id, { q: "it's \\ ' \\' :* a&b !x (y" })).toEqual([]);
      expect((await ids(c.id, { q: `${tok}'s` })).sort()).toEqual([byTitle.id, byDesc.id, byComment.id].sort());
      const badCursor = Buffer.from(JSON.stringify({ t: -1, o: 0 })).toString('base64url');
      await t.http.get(`/api/companies/${c.id}/issues`).query({ q: tok, cursor: badCursor }).expect(400);
      expect(await ids(c.id, { q: tok, status: 'done' })).toEqual([]);
    });

    it('q: best match by tier (identifier, title, text, comment), priority order within a tier, each issue once; filters apply to every tier; pages by cursor across tiers', async () => {
      const c = await createCompany(t);
      const tok = `zr${randomUUID().slice(0, 8)}`;
      const comment = (issueId: string, body: string) => t.http.post(`/api/issues/${issueId}/comments`).send({ body }).expect(201);
      const descLow = await createIssue(t, c.id, { title: 'alpha', description: `about ${tok}`, priority: 'low' });
      const commentOnly = await createIssue(t, c.id, { title: 'gamma', priority: 'critical', status: 'todo' });
      await comment(commentOnly.id, `${tok} here`);
      const titleLow = await createIssue(t, c.id, { title: `${tok} low`, priority: 'low' });
      const titleHigh = await createIssue(t, c.id, { title: `${tok} high`, priority: 'high' });
      const textAndComment = await createIssue(t, c.id, { title: 'beta', description: `more ${tok}`, priority: 'medium' });
      await comment(textAndComment.id, `more on ${tok}`);
      await createIssue(t, c.id, { title: 'unrelated', priority: 'critical' });
      const found = await ids(c.id, { q: tok });
      expect(found).toEqual([titleHigh.id, titleLow.id, textAndComment.id, descLow.id, commentOnly.id]);
      // every word must match within one tier's fields: the title has one, the description the other
      expect(await ids(c.id, { q: `${tok} alpha` })).toEqual([descLow.id]);
      expect(await ids(c.id, { q: tok, status: 'todo' })).toEqual([commentOnly.id]);
      expect(await ids(c.id, { q: tok, status: 'backlog' })).toEqual(found.filter((id) => id !== commentOnly.id));
      const seen: string[] = [];
      let cursor: string | undefined;
      for (let page = 0; page < 4; page++) {
        const res = await t.http
          .get(`/api/companies/${c.id}/issues`)
          .query({ q: tok, limit: '2', ...(cursor ? { cursor } : {}) })
          .expect(200);
        seen.push(...res.body.map((i: { id: string }) => i.id));
        cursor = res.headers['x-next-cursor'];
        if (!cursor) break;
      }
      expect(seen).toEqual(found);
      expect(cursor).toBeUndefined();
    });

    it('q with several words: all must match; tiers, order and paging as for one word', async () => {
      const c = await createCompany(t);
      const [a, b] = [`za${randomUUID().slice(0, 8)}`, `zb${randomUUID().slice(0, 8)}`];
      const low = await createIssue(t, c.id, { title: `${a} ${b} one`, priority: 'low' });
      const high = await createIssue(t, c.id, { title: `${b} and ${a}`, priority: 'high' });
      const medium = await createIssue(t, c.id, { title: `${a} ${b} three`, priority: 'medium' });
      const inText = await createIssue(t, c.id, { title: a, description: `about ${b}`, priority: 'critical' });
      await createIssue(t, c.id, { title: `${a} alone`, priority: 'critical' });
      const inComment = await createIssue(t, c.id, { title: 'other' });
      await t.http
        .post(`/api/issues/${inComment.id}/comments`)
        .send({ body: `${b} ${a}` })
        .expect(201);
      const expected = [high.id, medium.id, low.id, inText.id, inComment.id];
      expect(await ids(c.id, { q: `${a} ${b}` })).toEqual(expected);
      const seen: string[] = [];
      let cursor: string | undefined;
      for (let page = 0; page < 4; page++) {
        const res = await t.http
          .get(`/api/companies/${c.id}/issues`)
          .query({ q: `${b} ${a}`, limit: '2', ...(cursor ? { cursor } : {}) })
          .expect(200);
        seen.push(...res.body.map((i: { id: string }) => i.id));
        cursor = res.headers['x-next-cursor'];
        if (!cursor) break;
      }
      expect(seen).toEqual(expected);
    });

    it('q: the exact identifier comes first, then issues that mention it', async () => {
      const c = await createCompany(t);
      const target = await createIssue(t, c.id, { title: 'the target', priority: 'low' });
      const mention = await createIssue(t, c.id, { title: `follow-up of ${target.identifier}`, priority: 'critical' });
      expect(await ids(c.id, { q: target.identifier.toLowerCase() })).toEqual([target.id, mention.id]);
    });

    it('leaves out hidden issues and routine executions unless asked', async () => {
      const c = await createCompany(t);
      const keep = await createIssue(t, c.id);
      const hidden = await createIssue(t, c.id);
      const routine = await createIssue(t, c.id, { originKind: 'routine_execution', originId: 'r9' });
      const res = await t.http.patch(`/api/issues/${hidden.id}`).send({ hiddenAt: new Date().toISOString() }).expect(200);
      expect(res.body.hiddenAt).toEqual(expect.any(String));
      expect(await ids(c.id)).toEqual([keep.id]);
      expect((await ids(c.id, { includeRoutineExecutions: 'true' })).sort()).toEqual([keep.id, routine.id].sort());
      expect(await ids(c.id, { originKind: 'routine_execution' })).toEqual([routine.id]);
      expect(await ids(c.id, { originId: 'r9' })).toEqual([routine.id]);
      // hidden issue activity leaves the company feed, other activity stays
      const feed = (await t.http.get(`/api/companies/${c.id}/activity`).expect(200)).body as Array<{ entityId: string }>;
      expect(feed.some((a) => a.entityId === hidden.id)).toBe(false);
      expect(feed.some((a) => a.entityId === keep.id)).toBe(true);
      expect(feed.some((a) => a.entityId === c.id)).toBe(true);
      // a hand-written activity row with entityType issue and a non-uuid id stays in the feed
      await t.http
        .post(`/api/companies/${c.id}/activity`)
        .send({ actorId: 'x', action: 'note', entityType: 'issue', entityId: 'not-a-uuid' })
        .expect(201);
      expect((await t.http.get(`/api/companies/${c.id}/activity?entityType=issue&entityId=not-a-uuid`).expect(200)).body).toHaveLength(1);
      await t.http.patch(`/api/issues/${hidden.id}`).send({ hiddenAt: null }).expect(200);
      expect(await ids(c.id)).toContain(hidden.id);
    });

    it('`me` filters resolve to the board user and are refused for agents', async () => {
      const c = await createCompany(t);
      const a = await insertAgent(t, c.id);
      const mine = await createIssue(t, c.id, { assigneeUserId: 'local-board' });
      const touched = await createIssue(t, c.id, { title: 'touched' });
      expect(await ids(c.id, { assigneeUserId: 'me' })).toEqual([mine.id]);
      expect((await ids(c.id, { touchedByUserId: 'me' })).sort()).toEqual([mine.id, touched.id].sort());
      // unread: another author commented on an issue the user touched
      await t.http.post(`/api/issues/${touched.id}/comments`).set(bearer(a.token)).send({ body: 'news' }).expect(201);
      expect(await ids(c.id, { unreadForUserId: 'me' })).toEqual([touched.id]);
      expect((await ids(c.id, { inboxArchivedByUserId: 'me' })).sort()).toEqual([mine.id, touched.id].sort());
      for (const f of ['assigneeUserId', 'touchedByUserId', 'inboxArchivedByUserId', 'unreadForUserId']) {
        await t.http.get(`/api/companies/${c.id}/issues?${f}=me`).set(bearer(a.token)).expect(403);
      }
      expect(await ids(c.id, { assigneeUserId: 'local-board' }, bearer(a.token))).toEqual([mine.id]);
    });
  });

  describe('POST /api/issues/:issueId/read and /inbox-archive', () => {
    it('reading clears unread; archiving hides from the inbox until the issue changes; board only', async () => {
      const c = await createCompany(t);
      const a = await insertAgent(t, c.id);
      const issue = await createIssue(t, c.id);
      await t.http.post(`/api/issues/${issue.id}/comments`).set(bearer(a.token)).send({ body: 'news' }).expect(201);
      expect(await ids(c.id, { unreadForUserId: 'me' })).toEqual([issue.id]);
      const read = await t.http.post(`/api/issues/${issue.identifier}/read`).expect(200);
      expect(read.body).toMatchObject({ issueId: issue.id, userId: 'local-board', lastReadAt: expect.any(String), inboxArchivedAt: null });
      expect(await ids(c.id, { unreadForUserId: 'me' })).toEqual([]);
      await t.http.post(`/api/issues/${issue.id}/inbox-archive`).expect(200);
      expect(await ids(c.id, { inboxArchivedByUserId: 'me' })).toEqual([]);
      await t.http.delete(`/api/issues/${issue.id}/inbox-archive`).expect(200);
      expect(await ids(c.id, { inboxArchivedByUserId: 'me' })).toEqual([issue.id]);
      await t.http.post(`/api/issues/${issue.id}/inbox-archive`).expect(200);
      await t.http.post(`/api/issues/${issue.id}/comments`).set(bearer(a.token)).send({ body: 'more news' }).expect(201);
      expect(await ids(c.id, { inboxArchivedByUserId: 'me' })).toEqual([issue.id]);
      expect(await ids(c.id, { unreadForUserId: 'me' })).toEqual([issue.id]);
      await t.http.post(`/api/issues/${issue.id}/read`).set(bearer(a.token)).expect(403);
      await t.http.post(`/api/issues/${randomUUID()}/read`).expect(404);
    });
  });

  describe('GET /api/issues/:issueId', () => {
    it('answers by UUID and by identifier (any case); 404 for unknown or malformed ids and across companies', async () => {
      const c = await createCompany(t);
      const issue = await createIssue(t, c.id);
      for (const ref of [issue.id, issue.identifier, issue.identifier.toLowerCase()]) {
        expect((await t.http.get(`/api/issues/${ref}`).expect(200)).body.id).toBe(issue.id);
      }
      for (const ref of [randomUUID(), 'nope', `${c.issuePrefix}-999`, 'DROP TABLE'])
        await t.http.get(`/api/issues/${encodeURIComponent(ref)}`).expect(404);
      const other = await createCompany(t);
      const stranger = await insertAgent(t, other.id);
      await t.http.get(`/api/issues/${issue.id}`).set(bearer(stranger.token)).expect(404);
      await t.http.patch(`/api/issues/${issue.id}`).set(bearer(stranger.token)).send({ title: 'x' }).expect(404);
    });

    it('adds project, ancestors (nearest first), blockers both ways, legacy plan, mentioned projects and empty document fields', async () => {
      const c = await createCompany(t);
      const project = await insertProject(t, c.id);
      const root = await createIssue(t, c.id, { projectId: project });
      const mid = await createIssue(t, c.id, { parentId: root.id, projectId: project });
      const blocker = await createIssue(t, c.id);
      const leaf = await createIssue(t, c.id, {
        parentId: mid.identifier,
        projectId: project,
        blockedByIssueIds: [blocker.id],
        description: `Intro\n<plan>\n1. do it\n</plan>\nsee project://${project}`,
      });
      const b = (await t.http.get(`/api/issues/${leaf.id}`).expect(200)).body;
      expect(b.ancestors.map((a: { id: string }) => a.id)).toEqual([mid.id, root.id]);
      expect(b.project).toMatchObject({ id: project });
      expect(b.blockedBy.map((x: { id: string }) => x.id)).toEqual([blocker.id]);
      expect(b.blockedByIssueIds).toEqual([blocker.id]);
      expect(b.legacyPlanDocument).toMatchObject({ key: 'plan', body: '1. do it' });
      expect(b.mentionedProjects).toEqual([expect.objectContaining({ id: project })]);
      expect(b).toMatchObject({ planDocument: null, documentSummaries: [], currentExecutionWorkspace: null, workProducts: [] });
      const blk = (await t.http.get(`/api/issues/${blocker.id}`).expect(200)).body;
      expect(blk.blocks.map((x: { id: string }) => x.id)).toEqual([leaf.id]);
      expect(blk.legacyPlanDocument).toBeNull();
    });

    it('goal precedence: own goal, else project goal, else the company default goal only without a project', async () => {
      const c = await createCompany(t);
      const companyGoal = await insertGoal(t, c.id, { level: 'company' });
      await insertGoal(t, c.id, { level: 'company' });
      const own = await insertGoal(t, c.id);
      const projGoal = await insertGoal(t, c.id);
      const withGoal = await insertProject(t, c.id, { goalId: projGoal });
      const noGoal = await insertProject(t, c.id);
      const goalOf = async (body: Record<string, unknown>) =>
        (await t.http.get(`/api/issues/${(await createIssue(t, c.id, body)).id}`).expect(200)).body.goal;
      expect((await goalOf({ goalId: own, projectId: withGoal })).id).toBe(own);
      expect((await goalOf({ projectId: withGoal })).id).toBe(projGoal);
      expect(await goalOf({ projectId: noGoal })).toBeNull();
      expect((await goalOf({})).id).toBe(companyGoal);
    });
  });

  describe('PATCH /api/issues/:issueId', () => {
    it('is partial, writes issue.updated activity readable by identifier, rejects null for required fields', async () => {
      const c = await createCompany(t);
      const issue = await createIssue(t, c.id, { description: 'keep', priority: 'high', status: 'todo' });
      const res = await t.http.patch(`/api/issues/${issue.identifier}`).send({ title: 'Renamed' }).expect(200);
      expect(res.body).toMatchObject({ title: 'Renamed', description: 'keep', priority: 'high', status: 'todo' });
      for (const body of [{ title: null }, { status: null }, { priority: 'x' }, { title: '' }])
        await t.http.patch(`/api/issues/${issue.id}`).send(body).expect(400);
      const activity = (await t.http.get(`/api/issues/${issue.identifier}/activity`).expect(200)).body;
      expect(activity.map((a: { action: string }) => a.action)).toEqual(['issue.updated', 'issue.created']);
      expect(activity[0]).toMatchObject({ entityType: 'issue', entityId: issue.id, actorType: 'user' });
      await t.http.patch(`/api/issues/${randomUUID()}`).send({ title: 'x' }).expect(404);
    });

    it('adds a comment in the same request; reopen moves a closed issue to todo only with a comment and without an explicit status', async () => {
      const c = await createCompany(t);
      const issue = await createIssue(t, c.id, { status: 'done' });
      expect((await t.http.patch(`/api/issues/${issue.id}`).send({ reopen: true }).expect(200)).body.status).toBe('done');
      const res = await t.http.patch(`/api/issues/${issue.id}`).send({ comment: 'again', reopen: true, priority: 'low' }).expect(200);
      expect(res.body).toMatchObject({ status: 'todo', priority: 'low', completedAt: null });
      const comments = (await t.http.get(`/api/issues/${issue.id}/comments`).expect(200)).body;
      expect(comments.map((x: { body: string }) => x.body)).toEqual(['again']);
      const closed = await createIssue(t, c.id, { status: 'cancelled' });
      expect(
        (await t.http.patch(`/api/issues/${closed.id}`).send({ comment: 'x', reopen: true, status: 'in_review' }).expect(200)).body.status,
      ).toBe('in_review');
      const actions = (await t.http.get(`/api/issues/${issue.id}/activity`).expect(200)).body.map((a: { action: string }) => a.action);
      expect(actions).toEqual(expect.arrayContaining(['issue.updated', 'issue.comment_added']));
    });

    it('a failing part rolls the whole PATCH back (comment included)', async () => {
      const c = await createCompany(t);
      const issue = await createIssue(t, c.id);
      await t.http
        .patch(`/api/issues/${issue.id}`)
        .send({ title: 'changed', comment: 'lost', blockedByIssueIds: [issue.id] })
        .expect(422);
      expect((await t.http.get(`/api/issues/${issue.id}`).expect(200)).body.title).toBe(issue.title);
      expect((await t.http.get(`/api/issues/${issue.id}/comments`).expect(200)).body).toEqual([]);
    });

    it('interrupt needs a comment and a board caller; it cancels the assignee run for this issue and is recorded', async () => {
      const c = await createCompany(t);
      const a = await insertAgent(t, c.id);
      const issue = await createIssue(t, c.id, { status: 'todo', assigneeAgentId: a.id });
      await t.http.patch(`/api/issues/${issue.id}`).send({ interrupt: true }).expect(400);
      await t.http.patch(`/api/issues/${issue.id}`).set(bearer(a.token)).send({ interrupt: true, comment: 'stop' }).expect(403);
      await t.http.post(`/api/issues/${issue.id}/comments`).set(bearer(a.token)).send({ body: 'stop', interrupt: true }).expect(403);
      cancelled.length = 0;
      await t.http.patch(`/api/issues/${issue.id}`).send({ interrupt: true, comment: 'stop now' }).expect(200);
      expect(cancelled).toEqual([{ scope: { companyId: c.id, agentIds: [a.id], issueId: issue.id }, reason: 'issue_interrupted' }]);
      await t.http.post(`/api/issues/${issue.id}/comments`).send({ body: 'and again', interrupt: true }).expect(201);
      expect(cancelled).toHaveLength(2);
      const actions = (await t.http.get(`/api/issues/${issue.id}/activity`).expect(200)).body.map((x: { action: string }) => x.action);
      expect(actions.filter((x: string) => x === 'issue.interrupted')).toHaveLength(2);
    });

    it('status moves set and clear the lifecycle timestamps', async () => {
      const c = await createCompany(t);
      const issue = await createIssue(t, c.id, { status: 'todo' });
      const started = (await t.http.patch(`/api/issues/${issue.id}`).send({ status: 'in_progress' }).expect(200)).body;
      expect(started.startedAt).toEqual(expect.any(String));
      const done = (await t.http.patch(`/api/issues/${issue.id}`).send({ status: 'done' }).expect(200)).body;
      expect(done).toMatchObject({ completedAt: expect.any(String), startedAt: started.startedAt });
      const cancelledIssue = (await t.http.patch(`/api/issues/${issue.id}`).send({ status: 'cancelled' }).expect(200)).body;
      expect(cancelledIssue).toMatchObject({ completedAt: null, cancelledAt: expect.any(String) });
    });

    it('assignment changes pass the decision and wake the new assignee; a status leaving backlog wakes the assignee', async () => {
      const c = await createCompany(t);
      const a = await insertAgent(t, c.id);
      const b = await insertAgent(t, c.id);
      const issue = await createIssue(t, c.id, { assigneeAgentId: a.id });
      expect(await wakeups(t, a.id)).toEqual([]);
      await t.http.patch(`/api/issues/${issue.id}`).send({ status: 'todo' }).expect(200);
      expect(await wakeups(t, a.id)).toHaveLength(1);
      await t.http.patch(`/api/issues/${issue.id}`).set(bearer(a.token)).send({ assigneeAgentId: b.id }).expect(403);
      await t.http.patch(`/api/issues/${issue.id}`).send({ assigneeAgentId: b.id }).expect(200);
      expect(await wakeups(t, b.id)).toEqual([expect.objectContaining({ source: 'assignment', reason: 'issue_assigned' })]);
      expect((await t.http.patch(`/api/issues/${issue.id}`).send({ assigneeAgentId: null }).expect(200)).body.assigneeAgentId).toBeNull();
    });
  });

  describe('blockers and parents', () => {
    it('PATCH blockedByIssueIds replaces the set; rejects self-block, cycles and unknown issues with 422', async () => {
      const c = await createCompany(t);
      const [a, b, d] = [await createIssue(t, c.id), await createIssue(t, c.id), await createIssue(t, c.id)];
      expect(
        (
          await t.http
            .patch(`/api/issues/${b.id}`)
            .send({ blockedByIssueIds: [a.id, d.identifier] })
            .expect(200)
        ).body.blockedByIssueIds.sort(),
      ).toEqual([a.id, d.id].sort());
      expect(
        (
          await t.http
            .patch(`/api/issues/${b.id}`)
            .send({ blockedByIssueIds: [a.id] })
            .expect(200)
        ).body.blockedByIssueIds,
      ).toEqual([a.id]);
      await t.http
        .patch(`/api/issues/${a.id}`)
        .send({ blockedByIssueIds: [a.id] })
        .expect(422);
      await t.http
        .patch(`/api/issues/${a.id}`)
        .send({ blockedByIssueIds: [b.id] })
        .expect(422);
      await t.http
        .patch(`/api/issues/${d.id}`)
        .send({ blockedByIssueIds: [b.id] })
        .expect(200);
      await t.http
        .patch(`/api/issues/${a.id}`)
        .send({ blockedByIssueIds: [d.id] })
        .expect(422); // a -> b -> d -> a
      await t.http
        .patch(`/api/issues/${a.id}`)
        .send({ blockedByIssueIds: [randomUUID()] })
        .expect(422);
      expect((await t.http.get(`/api/issues/${a.id}`).expect(200)).body.blockedBy).toEqual([]);
      expect((await t.http.patch(`/api/issues/${b.id}`).send({ blockedByIssueIds: [] }).expect(200)).body.blockedByIssueIds).toEqual([]);
    });

    it('closing the last open blocker wakes the blocked issue assignee once', async () => {
      const c = await createCompany(t);
      const agent = await insertAgent(t, c.id);
      const [x, y] = [await createIssue(t, c.id, { status: 'todo' }), await createIssue(t, c.id, { status: 'todo' })];
      const blocked = await createIssue(t, c.id, { blockedByIssueIds: [x.id, y.id] });
      await t.dataSource.query(`UPDATE issues SET assignee_agent_id = $1 WHERE id = $2`, [agent.id, blocked.id]);
      await t.http.patch(`/api/issues/${x.id}`).send({ status: 'done' }).expect(200);
      expect(await wakeups(t, agent.id)).toEqual([]);
      await t.http.patch(`/api/issues/${y.id}`).send({ status: 'cancelled' }).expect(200);
      expect(await wakeups(t, agent.id)).toEqual([
        expect.objectContaining({ source: 'automation', trigger_detail: 'system', reason: 'blocker_resolved', issue_id: blocked.id }),
      ]);
    });

    it('the last two blockers closed at the same moment wake the blocked issue assignee once', async () => {
      const c = await createCompany(t);
      const agent = await insertAgent(t, c.id);
      const [x, y] = [await createIssue(t, c.id, { status: 'todo' }), await createIssue(t, c.id, { status: 'todo' })];
      const blocked = await createIssue(t, c.id, { blockedByIssueIds: [x.id, y.id] });
      await t.dataSource.query(`UPDATE issues SET assignee_agent_id = $1 WHERE id = $2`, [agent.id, blocked.id]);
      // each close takes the company's activity chain head with its COMMIT: held here, both closes
      // have looked for what they unblock before either commits (each saw the other still open)
      const hold = new Client({ connectionString: t.databaseUrl });
      await hold.connect();
      try {
        await hold.query('BEGIN');
        await hold.query('SELECT 1 FROM activity_chain_heads WHERE company_id = $1 FOR UPDATE', [c.id]);
        const closing = [x, y].map((i) =>
          t.http
            .patch(`/api/issues/${i.id}`)
            .send({ status: 'done' })
            .then((r) => r.status),
        );
        await waitFor(
          async () =>
            (
              await t.dataSource.query(
                `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`,
              )
            )[0].n >= 2,
          'both closes waiting for a lock',
        );
        await hold.query('COMMIT');
        expect(await Promise.all(closing)).toEqual([200, 200]);
      } finally {
        await hold.end();
      }
      expect(await wakeups(t, agent.id)).toEqual([
        expect.objectContaining({ source: 'automation', trigger_detail: 'system', reason: 'blocker_resolved', issue_id: blocked.id }),
      ]);
    });

    it('rejects a parent cycle and a self-parent with 422', async () => {
      const c = await createCompany(t);
      const root = await createIssue(t, c.id);
      const child = await createIssue(t, c.id, { parentId: root.id });
      await t.http.patch(`/api/issues/${root.id}`).send({ parentId: child.id }).expect(422);
      await t.http.patch(`/api/issues/${root.id}`).send({ parentId: root.id }).expect(422);
      expect((await t.http.patch(`/api/issues/${child.id}`).send({ parentId: null }).expect(200)).body.parentId).toBeNull();
    });
  });

  describe('authenticated mode', () => {
    let s: TestApp;
    beforeAll(async () => {
      s = await createTestApp({ env: { SERVICE_DEPLOYMENT_MODE: 'authenticated' } });
    });
    afterAll(() => s.close());

    it('answers 401 without credentials on every issue route', async () => {
      const c = await insertCompany(s);
      const a = await insertAgent(s, c.id);
      const issue = (await s.http.post(`/api/companies/${c.id}/issues`).set(agentHeaders(a)).send({ title: 'x' }).expect(201)).body;
      await s.http.get(`/api/companies/${c.id}/issues`).expect(401);
      await s.http.post(`/api/companies/${c.id}/issues`).send({ title: 'x' }).expect(401);
      await s.http.get(`/api/issues/${issue.id}`).expect(401);
      await s.http.patch(`/api/issues/${issue.id}`).send({ title: 'y' }).expect(401);
      await s.http.get(`/api/issues/${issue.id}/activity`).expect(401);
      await s.http.get(`/api/companies/${c.id}/labels`).expect(401);
    });
  });
});
