import { randomUUID } from 'node:crypto';
import { bearer, createCompany } from '../support/factories';
import { agentHeaders, checkedOutIssue, createIssue, finishRun, insertAgent, insertProject, insertRun, wakeups } from '../support/issues';
import { createTestApp, TestApp } from '../support/test-app';

describe('checkout and release', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());

  const checkout = (issueId: string, body: Record<string, unknown>, headers: Record<string, string> = {}) =>
    t.http.post(`/api/issues/${issueId}/checkout`).set(headers).send(body);
  const agentsWithRuns = (companyId: string, n: number) =>
    Promise.all(
      Array.from({ length: n }, async () => {
        const agent = await insertAgent(t, companyId);
        return { agent, run: await insertRun(t, agent) };
      }),
    );
  const getIssue = async (id: string) => (await t.http.get(`/api/issues/${id}`).expect(200)).body;

  describe('POST /api/issues/:issueId/checkout', () => {
    it('board checkout moves a todo issue to in_progress, assigns the agent, wakes it and records issue.checked_out', async () => {
      const c = await createCompany(t);
      const a = await insertAgent(t, c.id);
      const issue = await createIssue(t, c.id, { status: 'todo' });
      const res = await checkout(issue.identifier, { agentId: a.id, expectedStatuses: ['todo'] }).expect(200);
      expect(res.body).toMatchObject({ status: 'in_progress', assigneeAgentId: a.id, checkoutRunId: null, startedAt: expect.any(String) });
      expect(await wakeups(t, a.id)).toEqual([expect.objectContaining({ source: 'assignment', issue_id: issue.id })]);
      const actions = (await t.http.get(`/api/issues/${issue.id}/activity`).expect(200)).body.map((x: { action: string }) => x.action);
      expect(actions[0]).toBe('issue.checked_out');
    });

    it('answers 409 when the status is not in expectedStatuses and changes nothing', async () => {
      const c = await createCompany(t);
      const a = await insertAgent(t, c.id);
      const issue = await createIssue(t, c.id, { status: 'todo' });
      const res = await checkout(issue.id, { agentId: a.id, expectedStatuses: ['backlog', 'in_review'] }).expect(409);
      expect(res.body).toMatchObject({ code: 'status_mismatch', status: 'todo' });
      expect(await getIssue(issue.id)).toMatchObject({ status: 'todo', assigneeAgentId: null });
    });

    it('validates the body: agentId uuid, expectedStatuses non-empty known statuses; unknown agent 422', async () => {
      const c = await createCompany(t);
      const issue = await createIssue(t, c.id, { status: 'todo' });
      const a = await insertAgent(t, c.id);
      for (const body of [
        { agentId: a.id },
        { agentId: a.id, expectedStatuses: [] },
        { agentId: a.id, expectedStatuses: ['open'] },
        { agentId: 'x', expectedStatuses: ['todo'] },
      ]) {
        await checkout(issue.id, body).expect(400);
      }
      await checkout(issue.id, { agentId: randomUUID(), expectedStatuses: ['todo'] }).expect(422);
      const other = await insertAgent(t, (await createCompany(t)).id);
      await checkout(issue.id, { agentId: other.id, expectedStatuses: ['todo'] }).expect(422);
      await checkout(randomUUID(), { agentId: a.id, expectedStatuses: ['todo'] }).expect(404);
    });

    it('agent checkout needs the run header, sets checkoutRunId, and is idempotent for the same agent and run', async () => {
      const c = await createCompany(t);
      const a = await insertAgent(t, c.id);
      const run = await insertRun(t, a);
      const issue = await createIssue(t, c.id, { status: 'todo' });
      const noHeader = await checkout(issue.id, { agentId: a.id, expectedStatuses: ['todo'] }, agentHeaders(a)).expect(403);
      expect(noHeader.body.code).toBe('run_id_required');
      const res = await checkout(issue.id, { agentId: a.id, expectedStatuses: ['todo'] }, agentHeaders(a, run)).expect(200);
      expect(res.body).toMatchObject({ status: 'in_progress', assigneeAgentId: a.id, checkoutRunId: run });
      const again = await checkout(issue.id, { agentId: a.id, expectedStatuses: ['in_progress'] }, agentHeaders(a, run)).expect(200);
      expect(again.body).toMatchObject({ status: 'in_progress', assigneeAgentId: a.id, checkoutRunId: run });
      expect(await wakeups(t, a.id)).toEqual([]);
    });

    it('an agent must check out as itself (403), and a finished run is not accepted as run header (422)', async () => {
      const c = await createCompany(t);
      const a = await insertAgent(t, c.id);
      const b = await insertAgent(t, c.id);
      const run = await insertRun(t, a);
      const issue = await createIssue(t, c.id, { status: 'todo' });
      await checkout(issue.id, { agentId: b.id, expectedStatuses: ['todo'] }, agentHeaders(a, run)).expect(403);
      const done = await insertRun(t, a, 'succeeded');
      await checkout(issue.id, { agentId: a.id, expectedStatuses: ['todo'] }, agentHeaders(a, done)).expect(422);
      expect(await getIssue(issue.id)).toMatchObject({ status: 'todo', assigneeAgentId: null });
    });

    it('20 agents racing for one issue: exactly one wins, the others get 409', async () => {
      const c = await createCompany(t);
      const issue = await createIssue(t, c.id, { status: 'todo' });
      const racers = await agentsWithRuns(c.id, 20);
      const results = await Promise.all(
        racers.map((r) => checkout(issue.id, { agentId: r.agent.id, expectedStatuses: ['todo'] }, agentHeaders(r.agent, r.run))),
      );
      const statuses = results.map((r) => r.status);
      expect(statuses.filter((s) => s === 200)).toHaveLength(1);
      expect(statuses.filter((s) => s === 409)).toHaveLength(19);
      const winner = racers[statuses.indexOf(200)];
      expect(await getIssue(issue.id)).toMatchObject({
        status: 'in_progress',
        assigneeAgentId: winner.agent.id,
        checkoutRunId: winner.run,
      });
    });

    it('20 agents racing with in_progress also expected: still exactly one owner', async () => {
      const c = await createCompany(t);
      const issue = await createIssue(t, c.id, { status: 'todo' });
      const racers = await agentsWithRuns(c.id, 20);
      const results = await Promise.all(
        racers.map((r) =>
          checkout(issue.id, { agentId: r.agent.id, expectedStatuses: ['todo', 'in_progress'] }, agentHeaders(r.agent, r.run)),
        ),
      );
      expect(results.filter((r) => r.status === 200)).toHaveLength(1);
      expect(results.filter((r) => r.status === 409).every((r) => r.body.code === 'checkout_conflict')).toBe(true);
    });

    it('another agent cannot take a checked-out issue; a live lock of another run of the same agent is 409', async () => {
      const c = await createCompany(t);
      const { agent, runId, issue } = await checkedOutIssue(t, c.id);
      const other = await insertAgent(t, c.id);
      const otherRun = await insertRun(t, other);
      await checkout(issue.id, { agentId: other.id, expectedStatuses: ['in_progress'] }, agentHeaders(other, otherRun)).expect(409);
      const secondRun = await insertRun(t, agent);
      const res = await checkout(issue.id, { agentId: agent.id, expectedStatuses: ['in_progress'] }, agentHeaders(agent, secondRun)).expect(
        409,
      );
      expect(res.body).toMatchObject({ code: 'checkout_conflict', checkoutRunId: runId });
    });

    it('a stale lock (previous run finished or missing) is adopted by a new run of the same assignee', async () => {
      const c = await createCompany(t);
      const { agent, runId, issue } = await checkedOutIssue(t, c.id);
      await finishRun(t, runId, 'failed');
      const next = await insertRun(t, agent);
      await checkout(issue.id, { agentId: agent.id, expectedStatuses: ['todo'] }, agentHeaders(agent, next)).expect(409);
      const res = await checkout(issue.id, { agentId: agent.id, expectedStatuses: ['in_progress'] }, agentHeaders(agent, next)).expect(200);
      expect(res.body.checkoutRunId).toBe(next);
      // the run row vanished entirely
      await t.dataSource.query(`DELETE FROM heartbeat_runs WHERE id = $1`, [next]);
      const third = await insertRun(t, agent);
      expect(
        (await checkout(issue.id, { agentId: agent.id, expectedStatuses: ['in_progress'] }, agentHeaders(agent, third)).expect(200)).body
          .checkoutRunId,
      ).toBe(third);
      // but a stale lock is not free for another agent
      const other = await insertAgent(t, c.id);
      await finishRun(t, third);
      await checkout(
        issue.id,
        { agentId: other.id, expectedStatuses: ['in_progress'] },
        agentHeaders(other, await insertRun(t, other)),
      ).expect(409);
    });

    it('answers 409 when the project is paused', async () => {
      const c = await createCompany(t);
      const a = await insertAgent(t, c.id);
      const issue = await createIssue(t, c.id, { status: 'todo', projectId: await insertProject(t, c.id, { paused: true }) });
      const res = await checkout(issue.id, { agentId: a.id, expectedStatuses: ['todo'] }).expect(409);
      expect(res.body.code).toBe('project_paused');
    });

    it('an agent of another company gets 404 (as for an unknown issue)', async () => {
      const c = await createCompany(t);
      const issue = await createIssue(t, c.id, { status: 'todo' });
      const stranger = await insertAgent(t, (await createCompany(t)).id);
      await checkout(
        issue.id,
        { agentId: stranger.id, expectedStatuses: ['todo'] },
        agentHeaders(stranger, await insertRun(t, stranger)),
      ).expect(404);
    });
  });

  describe('POST /api/issues/:issueId/release', () => {
    it('board release moves to todo, clears assignee agent and checkoutRunId, keeps assigneeUserId', async () => {
      const c = await createCompany(t);
      const { issue } = await checkedOutIssue(t, c.id);
      await t.http.patch(`/api/issues/${issue.id}`).send({ assigneeUserId: 'user-7' }).expect(200);
      const res = await t.http.post(`/api/issues/${issue.id}/release`).expect(200);
      expect(res.body).toMatchObject({ status: 'todo', assigneeAgentId: null, checkoutRunId: null, assigneeUserId: 'user-7' });
      const actions = (await t.http.get(`/api/issues/${issue.id}/activity`).expect(200)).body.map((x: { action: string }) => x.action);
      expect(actions[0]).toBe('issue.released');
    });

    it('agents release only from the current checkout run; other agents get 403; closed issues 409', async () => {
      const c = await createCompany(t);
      const { agent, runId, issue } = await checkedOutIssue(t, c.id);
      const other = await insertAgent(t, c.id);
      await t.http
        .post(`/api/issues/${issue.id}/release`)
        .set(agentHeaders(other, await insertRun(t, other)))
        .expect(403);
      await t.http.post(`/api/issues/${issue.id}/release`).set(agentHeaders(agent)).expect(403);
      await t.http
        .post(`/api/issues/${issue.id}/release`)
        .set(agentHeaders(agent, await insertRun(t, agent)))
        .expect(409);
      const res = await t.http.post(`/api/issues/${issue.id}/release`).set(agentHeaders(agent, runId)).expect(200);
      expect(res.body).toMatchObject({ status: 'todo', assigneeAgentId: null, checkoutRunId: null });
      const done = await createIssue(t, c.id, { status: 'done' });
      await t.http.post(`/api/issues/${done.id}/release`).expect(409);
    });
  });

  describe('run ownership of a checked-out in_progress issue', () => {
    it('the owner updates only with its checkout run; other agents get 409; the board is not bound', async () => {
      const c = await createCompany(t);
      const { agent, runId, issue } = await checkedOutIssue(t, c.id);
      await t.http.patch(`/api/issues/${issue.id}`).set(agentHeaders(agent)).send({ title: 'no header' }).expect(403);
      await t.http
        .patch(`/api/issues/${issue.id}`)
        .set(agentHeaders(agent, await insertRun(t, agent)))
        .send({ title: 'other run' })
        .expect(409);
      expect(
        (await t.http.patch(`/api/issues/${issue.id}`).set(agentHeaders(agent, runId)).send({ title: 'ok' }).expect(200)).body.title,
      ).toBe('ok');
      const other = await insertAgent(t, c.id);
      const res = await t.http.patch(`/api/issues/${issue.id}`).set(bearer(other.token)).send({ title: 'steal' }).expect(409);
      expect(res.body.code).toBe('issue_checked_out');
      await t.http.patch(`/api/issues/${issue.id}`).send({ title: 'board' }).expect(200);
    });

    it('the owner comments only with its run header; other agents may not comment while it is checked out (409)', async () => {
      const c = await createCompany(t);
      const { agent, runId, issue } = await checkedOutIssue(t, c.id);
      await t.http.post(`/api/issues/${issue.id}/comments`).set(agentHeaders(agent)).send({ body: 'without' }).expect(403);
      await t.http.post(`/api/issues/${issue.id}/comments`).set(agentHeaders(agent, runId)).send({ body: 'with' }).expect(201);
      const other = await insertAgent(t, c.id);
      const refused = await t.http.post(`/api/issues/${issue.id}/comments`).set(bearer(other.token)).send({ body: 'peer' }).expect(409);
      expect(refused.body.code).toBe('issue_checked_out');
      // a board user may still comment
      await t.http.post(`/api/issues/${issue.id}/comments`).send({ body: 'board' }).expect(201);
      const bodies = (await t.http.get(`/api/issues/${issue.id}/comments`).expect(200)).body.map((x: { body: string }) => x.body);
      expect(bodies).toEqual(['with', 'board']);
    });

    it('a new run of the owner adopts a stale lock when it updates', async () => {
      const c = await createCompany(t);
      const { agent, runId, issue } = await checkedOutIssue(t, c.id);
      await finishRun(t, runId);
      const next = await insertRun(t, agent);
      await t.http.patch(`/api/issues/${issue.id}`).set(agentHeaders(agent, next)).send({ priority: 'high' }).expect(200);
      expect((await getIssue(issue.id)).checkoutRunId).toBe(next);
    });

    it('moving the issue out of in_progress ends the checkout', async () => {
      const c = await createCompany(t);
      const { agent, runId, issue } = await checkedOutIssue(t, c.id);
      const res = await t.http.patch(`/api/issues/${issue.id}`).set(agentHeaders(agent, runId)).send({ status: 'in_review' }).expect(200);
      expect(res.body).toMatchObject({ status: 'in_review', checkoutRunId: null, assigneeAgentId: agent.id });
    });
  });

  describe('agent views', () => {
    it('GET /api/agents/me/inbox-lite lists open assignments with blocker readiness and active run; agent-only', async () => {
      const c = await createCompany(t);
      const a = await insertAgent(t, c.id);
      // its assignment wakes are skipped: the only live run is the one inserted below (a dispatched
      // assignment run of `true` could still be running when the inbox is read on a busy machine)
      await t.dataSource.query(`UPDATE agents SET runtime_config = '{"heartbeat":{"enabled":false,"wakeOnDemand":false}}' WHERE id = $1`, [
        a.id,
      ]);
      const blocker = await createIssue(t, c.id, { status: 'todo' });
      const blocked = await createIssue(t, c.id, { status: 'todo', assigneeAgentId: a.id, blockedByIssueIds: [blocker.id] });
      const free = await createIssue(t, c.id, { status: 'todo', assigneeAgentId: a.id, priority: 'critical' });
      await createIssue(t, c.id, { status: 'done', assigneeAgentId: a.id });
      const run = await insertRun(t, a, 'running', { issueId: free.id });
      const items = (await t.http.get('/api/agents/me/inbox-lite').set(bearer(a.token)).expect(200)).body;
      expect(items.map((i: { id: string }) => i.id)).toEqual([free.id, blocked.id]);
      expect(Object.keys(items[1]).sort()).toEqual(
        [
          'id',
          'identifier',
          'title',
          'status',
          'priority',
          'projectId',
          'goalId',
          'parentId',
          'updatedAt',
          'activeRun',
          'dependencyReady',
          'unresolvedBlockerCount',
          'unresolvedBlockerIssueIds',
        ].sort(),
      );
      expect(items[1]).toMatchObject({
        identifier: blocked.identifier,
        dependencyReady: false,
        unresolvedBlockerCount: 1,
        unresolvedBlockerIssueIds: [blocker.id],
        activeRun: null,
      });
      expect(items[0]).toMatchObject({ dependencyReady: true, unresolvedBlockerCount: 0, activeRun: { id: run, status: 'running' } });
      await t.http.patch(`/api/issues/${blocker.id}`).send({ status: 'done' }).expect(200);
      const after = (await t.http.get('/api/agents/me/inbox-lite').set(bearer(a.token)).expect(200)).body;
      expect(after.find((i: { id: string }) => i.id === blocked.id)).toMatchObject({ dependencyReady: true, unresolvedBlockerCount: 0 });
      await t.http.get('/api/agents/me/inbox-lite').expect(403);
    });

    it('GET /api/issues/:issueId/runs lists runs touching the issue; GET /api/heartbeat-runs/:runId/issues the reverse', async () => {
      const c = await createCompany(t);
      const { agent, runId, issue } = await checkedOutIssue(t, c.id);
      const byContext = await insertRun(t, agent, 'succeeded', { context: { issueId: issue.id } });
      const byPayload = await insertRun(t, agent, 'succeeded', { context: { payload: { issueId: issue.id } } });
      await insertRun(t, agent, 'succeeded');
      const runs = (await t.http.get(`/api/issues/${issue.identifier}/runs`).expect(200)).body;
      expect(runs.map((r: { runId: string }) => r.runId).sort()).toEqual([runId, byContext, byPayload].sort());
      expect(runs[0]).toEqual(
        expect.objectContaining({ agentId: agent.id, adapterType: 'process', invocationSource: 'on_demand', logBytes: 0, usageJson: null }),
      );
      const issues = (await t.http.get(`/api/heartbeat-runs/${runId}/issues`).expect(200)).body;
      expect(issues).toEqual([expect.objectContaining({ id: issue.id, identifier: issue.identifier, status: 'in_progress' })]);
      expect((await t.http.get(`/api/heartbeat-runs/${randomUUID()}/issues`).expect(200)).body).toEqual([]);
      expect((await t.http.get(`/api/heartbeat-runs/nope/issues`).expect(200)).body).toEqual([]);
      const stranger = await insertAgent(t, (await createCompany(t)).id);
      // another company's run answers as an unknown one (the spec's empty list); another company's issue 404
      expect((await t.http.get(`/api/heartbeat-runs/${runId}/issues`).set(bearer(stranger.token)).expect(200)).body).toEqual([]);
      await t.http.get(`/api/issues/${issue.id}/runs`).set(bearer(stranger.token)).expect(404);
    });

    it('GET /api/issues/:issueId/heartbeat-context gives the reduced issue, ancestors, comment cursor and wake comment', async () => {
      const c = await createCompany(t);
      const a = await insertAgent(t, c.id);
      const parent = await createIssue(t, c.id);
      const issue = await createIssue(t, c.id, { parentId: parent.id, status: 'todo', assigneeAgentId: a.id });
      const first = (await t.http.post(`/api/issues/${issue.id}/comments`).send({ body: 'one' }).expect(201)).body;
      const last = (await t.http.post(`/api/issues/${issue.id}/comments`).send({ body: 'two' }).expect(201)).body;
      const ctx = (
        await t.http.get(`/api/issues/${issue.identifier}/heartbeat-context?wakeCommentId=${first.id}`).set(bearer(a.token)).expect(200)
      ).body;
      expect(ctx.issue).toMatchObject({ id: issue.id, identifier: issue.identifier, status: 'todo', assigneeAgentId: a.id });
      expect(ctx.ancestors.map((x: { id: string }) => x.id)).toEqual([parent.id]);
      expect(ctx.commentCursor).toEqual({ totalComments: 2, latestCommentId: last.id, latestCommentAt: last.createdAt });
      expect(ctx.wakeComment).toMatchObject({ id: first.id, body: 'one' });
      expect(ctx).toMatchObject({ project: null, goal: null, attachments: [] });
    });
  });
});
