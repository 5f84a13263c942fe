import { bearer, createCompany } from '../support/factories';
import { createIssue } from '../support/issues';
import { insertAgent, insertAgentKey, wake, wakeBody } from '../support/heartbeat';
import { sqlRun } from '../support/sql';
import { createTestApp, TestApp } from '../support/test-app';

/** Subtree pause holds, interactions (agent asks, board answers) and the runner goal of an issue. */
describe('issue controls', () => {
  let t: TestApp;
  let companyId: string;
  beforeAll(async () => {
    t = await createTestApp();
    companyId = (await createCompany(t)).id;
  });
  afterAll(() => t.close());

  const outsiderToken = async () => {
    const other = await createCompany(t);
    return insertAgentKey(t, await insertAgent(t, other.id));
  };
  const tree = async () => {
    const root = await createIssue(t, companyId, { status: 'todo' });
    const child = await createIssue(t, companyId, { status: 'todo', parentId: root.id });
    const grandchild = await createIssue(t, companyId, { status: 'todo', parentId: child.id });
    const sibling = await createIssue(t, companyId, { status: 'todo' });
    return { root, child, grandchild, sibling };
  };
  const state = async (issueId: string) => (await t.http.get(`/api/issues/${issueId}/tree-control/state`).expect(200)).body;

  describe('tree-control', () => {
    it('pauses an issue and its descendants; the state names the hold (inherited below the root); resume clears it', async () => {
      const { root, child, grandchild, sibling } = await tree();
      expect(await state(root.id)).toMatchObject({ issueId: root.id, companyId, activePauseHold: null });
      const paused = await t.http.post(`/api/issues/${root.identifier}/tree-control/pause`).send({ reason: 'budget review' }).expect(200);
      expect(paused.body.activePauseHold).toMatchObject({
        rootIssueId: root.id,
        rootIssueIdentifier: root.identifier,
        inherited: false,
        reason: 'budget review',
        createdByUserId: 'local-board',
      });
      expect((await state(grandchild.id)).activePauseHold).toMatchObject({
        id: paused.body.activePauseHold.id,
        rootIssueId: root.id,
        inherited: true,
      });
      expect((await state(child.id)).activePauseHold.inherited).toBe(true);
      expect((await state(sibling.id)).activePauseHold).toBeNull();
      const activity = (await t.http.get(`/api/issues/${root.id}/activity`).expect(200)).body as Array<{ action: string }>;
      expect(activity.map((a) => a.action)).toContain('issue.tree_paused');
      const resumed = await t.http.post(`/api/issues/${root.id}/tree-control/resume`).expect(200);
      expect(resumed.body).toMatchObject({ activePauseHold: null, releasedHoldId: paused.body.activePauseHold.id, promotedWakes: 0 });
      expect((await state(grandchild.id)).activePauseHold).toBeNull();
    });

    it("answers 409 for a second pause of a paused subtree and for a resume away from the hold's root", async () => {
      const { root, child } = await tree();
      await t.http.post(`/api/issues/${root.id}/tree-control/resume`).expect(409);
      await t.http.post(`/api/issues/${root.id}/tree-control/pause`).send({}).expect(200);
      expect((await t.http.post(`/api/issues/${root.id}/tree-control/pause`).send({}).expect(409)).body.code).toBe(
        'issue_tree_already_paused',
      );
      await t.http.post(`/api/issues/${child.id}/tree-control/pause`).send({}).expect(409);
      const res = await t.http.post(`/api/issues/${child.id}/tree-control/resume`).expect(409);
      expect(res.body).toMatchObject({ code: 'issue_tree_held_by_ancestor', rootIssueId: root.id });
      await t.http.post(`/api/issues/${root.id}/tree-control/resume`).expect(200);
    });

    it('refuses checkouts in the paused subtree with 409 until resumed', async () => {
      const { root, grandchild } = await tree();
      const agent = await insertAgent(t, companyId);
      await t.http.post(`/api/issues/${root.id}/tree-control/pause`).send({}).expect(200);
      const refused = await t.http
        .post(`/api/issues/${grandchild.id}/checkout`)
        .send({ agentId: agent.id, expectedStatuses: ['todo'] })
        .expect(409);
      expect(refused.body).toMatchObject({ code: 'issue_tree_paused', rootIssueId: root.id });
      await t.http.post(`/api/issues/${root.id}/tree-control/resume`).expect(200);
      await t.http
        .post(`/api/issues/${grandchild.id}/checkout`)
        .send({ agentId: agent.id, expectedStatuses: ['todo'] })
        .expect(200);
    });

    it('defers wakes for issues of the paused subtree and runs them once resumed', async () => {
      const { root, child, sibling } = await tree();
      const agent = await insertAgent(t, companyId);
      await t.http.post(`/api/issues/${root.id}/tree-control/pause`).send({}).expect(200);
      const held = await wake(t, agent.id, wakeBody({ payload: { issueId: child.id } })).expect(202);
      expect(held.body).toMatchObject({ deferred: true, reason: 'issue_tree_held', wakeupRequestId: expect.any(String) });
      const runsFor = async (issueId: string) =>
        (await t.dataSource.query(`SELECT id FROM heartbeat_runs WHERE agent_id = $1 AND issue_id = $2`, [agent.id, issueId])).length;
      expect(await runsFor(child.id)).toBe(0);
      const [w] = await t.dataSource.query(`SELECT status FROM agent_wakeup_requests WHERE id = $1`, [held.body.wakeupRequestId]);
      expect(w.status).toBe('deferred');
      // an issue outside the subtree is not held
      const free = await wake(t, agent.id, wakeBody({ payload: { issueId: sibling.id } })).expect(202);
      expect(free.body.wakeupStatus).toBe('queued');
      const resumed = await t.http.post(`/api/issues/${root.id}/tree-control/resume`).expect(200);
      expect(resumed.body.promotedWakes).toBe(1);
      expect(await runsFor(child.id)).toBe(1);
    });

    it('keeps held wakes deferred when the live run they waited for ends; resume runs them', async () => {
      const { root, child } = await tree();
      // the live run lasts until it is cancelled, whether it is still queued then or a dispatch pass (kicked by
      // another test's run on this shared app) has started it
      const agent = await insertAgent(t, companyId, { adapterConfig: { command: 'sleep', args: ['60'] } });
      const live = await sqlRun(t, companyId, agent.id, { status: 'queued', issueId: child.id });
      await t.http.post(`/api/issues/${root.id}/tree-control/pause`).send({}).expect(200);
      const held = await wake(t, agent.id, wakeBody({ payload: { issueId: child.id } })).expect(202);
      expect(held.body.deferred).toBe(true);
      await t.http.post(`/api/heartbeat-runs/${live}/cancel`).expect(200);
      const runs = async () =>
        (
          await t.dataSource.query(`SELECT id FROM heartbeat_runs WHERE agent_id = $1 AND issue_id = $2 AND id <> $3`, [
            agent.id,
            child.id,
            live,
          ])
        ).length;
      expect(await runs()).toBe(0);
      await t.http.post(`/api/issues/${root.id}/tree-control/resume`).expect(200);
      expect(await runs()).toBe(1);
      // the resumed run (sleep 60) is not left running for the tests after this one
      const [resumedRun] = await t.dataSource.query(`SELECT id FROM heartbeat_runs WHERE agent_id = $1 AND id <> $2`, [agent.id, live]);
      await t.http.post(`/api/heartbeat-runs/${resumedRun.id}/cancel`).expect(200);
    });

    it('is board-only for pause and resume; another company gets 403, unknown issues 404', async () => {
      const { root } = await tree();
      const token = await insertAgentKey(t, await insertAgent(t, companyId));
      await t.http.post(`/api/issues/${root.id}/tree-control/pause`).set(bearer(token)).send({}).expect(403);
      await t.http.post(`/api/issues/${root.id}/tree-control/resume`).set(bearer(token)).expect(403);
      await t.http.get(`/api/issues/${root.id}/tree-control/state`).set(bearer(token)).expect(200);
      await t.http
        .get(`/api/issues/${root.id}/tree-control/state`)
        .set(bearer(await outsiderToken()))
        .expect(404);
      await t.http.get('/api/issues/00000000-0000-4000-8000-000000000000/tree-control/state').expect(404);
      await t.http.post(`/api/issues/${root.id}/tree-control/pause`).send({ reason: 42 }).expect(400);
    });
  });

  describe('interactions', () => {
    const ask = (issueId: string, token: string, body: Record<string, unknown>) =>
      t.http.post(`/api/issues/${issueId}/interactions`).set(bearer(token)).send(body);

    it('an agent asks with options; the board answers once; the answer wakes the agent and is in its heartbeat context', async () => {
      const agent = await insertAgent(t, companyId);
      const token = await insertAgentKey(t, agent);
      const issue = await createIssue(t, companyId, { status: 'todo' });
      const asked = await ask(issue.identifier, token, {
        prompt: 'Ship on Friday?',
        options: [
          { id: 'yes', label: 'Yes' },
          { id: 'no', label: 'Not yet' },
        ],
      }).expect(201);
      expect(asked.body).toMatchObject({
        issueId: issue.id,
        companyId,
        kind: 'question',
        status: 'pending',
        askedByAgentId: agent.id,
        allowFreeText: false,
        answer: null,
      });
      const listed = await t.http.get(`/api/issues/${issue.id}/interactions`).expect(200);
      expect(listed.body.map((i: { id: string }) => i.id)).toEqual([asked.body.id]);
      const answered = await t.http
        .post(`/api/issues/${issue.id}/interactions/${asked.body.id}/answer`)
        .send({ optionId: 'no', text: 'after the audit' })
        .expect(200);
      expect(answered.body).toMatchObject({
        status: 'answered',
        answer: { optionId: 'no', text: 'after the audit', answeredByUserId: 'local-board', answeredAt: expect.any(String) },
      });
      const again = await t.http.post(`/api/issues/${issue.id}/interactions/${asked.body.id}/answer`).send({ optionId: 'yes' }).expect(409);
      expect(again.body.code).toBe('interaction_answered');
      const [run] = await t.dataSource.query(
        `SELECT context_snapshot FROM heartbeat_runs WHERE agent_id = $1 AND context_snapshot->'payload'->>'interactionId' = $2`,
        [agent.id, asked.body.id],
      );
      expect(run.context_snapshot).toMatchObject({ reason: 'interaction_answered', issueId: issue.id });
      const ctx = await t.http.get(`/api/issues/${issue.id}/heartbeat-context`).set(bearer(token)).expect(200);
      expect(ctx.body.interactions).toEqual([
        expect.objectContaining({ id: asked.body.id, status: 'answered', answer: expect.objectContaining({ optionId: 'no' }) }),
      ]);
    });

    it('validates questions: prompt, unique options, free text needed without options (400)', async () => {
      const token = await insertAgentKey(t, await insertAgent(t, companyId));
      const issue = await createIssue(t, companyId);
      await ask(issue.id, token, { prompt: '' }).expect(400);
      await ask(issue.id, token, { prompt: 'x', options: [] }).expect(400);
      await ask(issue.id, token, {
        prompt: 'x',
        options: [
          { id: 'a', label: 'A' },
          { id: 'a', label: 'B' },
        ],
      }).expect(400);
      await ask(issue.id, token, { prompt: 'x', options: [{ id: 'bad id', label: 'A' }] }).expect(400);
      await ask(issue.id, token, { prompt: 'x', allowFreeText: false }).expect(400);
      const free = await ask(issue.id, token, { prompt: 'What name should the release get?' }).expect(201);
      expect(free.body).toMatchObject({ options: null, allowFreeText: true });
    });

    it('validates answers: an option of the question (422), free text only where allowed (422), something given (400)', async () => {
      const token = await insertAgentKey(t, await insertAgent(t, companyId));
      const issue = await createIssue(t, companyId);
      const other = await createIssue(t, companyId);
      const q = (await ask(issue.id, token, { prompt: 'Pick', options: [{ id: 'a', label: 'A' }] }).expect(201)).body;
      const url = `/api/issues/${issue.id}/interactions/${q.id}/answer`;
      expect((await t.http.post(url).send({ optionId: 'zzz' }).expect(422)).body.code).toBe('invalid_option');
      expect((await t.http.post(url).send({ text: 'free' }).expect(422)).body.code).toBe('option_required');
      await t.http.post(url).send({}).expect(400);
      await t.http.post(`/api/issues/${other.id}/interactions/${q.id}/answer`).send({ optionId: 'a' }).expect(404);
      await t.http.post(`/api/issues/${issue.id}/interactions/not-a-uuid/answer`).send({ optionId: 'a' }).expect(404);
      const free = (await ask(issue.id, token, { prompt: 'Why?' }).expect(201)).body;
      await t.http.post(`/api/issues/${issue.id}/interactions/${free.id}/answer`).send({ text: 'because' }).expect(200);
    });

    it('agents ask and read, the board answers: wrong caller 403, another company 404', async () => {
      const token = await insertAgentKey(t, await insertAgent(t, companyId));
      const issue = await createIssue(t, companyId);
      await t.http.post(`/api/issues/${issue.id}/interactions`).send({ prompt: 'board asking' }).expect(403);
      const q = (await ask(issue.id, token, { prompt: 'Ok?' }).expect(201)).body;
      await t.http.post(`/api/issues/${issue.id}/interactions/${q.id}/answer`).set(bearer(token)).send({ text: 'self' }).expect(403);
      await t.http.get(`/api/issues/${issue.id}/interactions`).set(bearer(token)).expect(200);
      const outsider = await outsiderToken();
      await t.http.get(`/api/issues/${issue.id}/interactions`).set(bearer(outsider)).expect(404);
      await ask(issue.id, outsider, { prompt: 'cross' }).expect(404);
    });
  });

  describe('GET /api/issues/:issueId/runner-goal', () => {
    it("says truthfully that the assignee's adapter holds no goal, and whether it is working now", async () => {
      const agent = await insertAgent(t, companyId);
      const issue = await createIssue(t, companyId, { assigneeAgentId: agent.id });
      const idle = await t.http.get(`/api/issues/${issue.id}/runner-goal`).expect(200);
      expect(idle.body).toMatchObject({
        issueId: issue.id,
        agentId: agent.id,
        adapterType: 'process',
        goal: null,
        workingNow: false,
        activeRunId: null,
        capability: { availability: 'unsupported', verified: true, actions: [], reasonCode: 'persistent_session_goal_extension_required' },
      });
      const runId = await sqlRun(t, companyId, agent.id, { status: 'running', issueId: issue.id });
      expect((await t.http.get(`/api/issues/${issue.id}/runner-goal`).expect(200)).body).toMatchObject({
        workingNow: true,
        activeRunId: runId,
      });
      const unassigned = await createIssue(t, companyId);
      expect((await t.http.get(`/api/issues/${unassigned.id}/runner-goal`).expect(200)).body).toMatchObject({
        agentId: null,
        adapterType: null,
        capability: { availability: 'unsupported', reasonCode: 'no_assigned_agent' },
      });
      await t.http
        .get(`/api/issues/${issue.id}/runner-goal`)
        .set(bearer(await outsiderToken()))
        .expect(404);
    });
  });
});
