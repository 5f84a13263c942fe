import { randomUUID } from 'node:crypto';
import { bearer, createCompany } from '../support/factories';
import { createIssue, insertAgent } from '../support/issues';
import { createProject } from '../support/projects';
import { sqlRun } from '../support/sql';
import { createTestApp, TestApp } from '../support/test-app';
import { auth, AUTHENTICATED, insertAgentWithKey, ownedCompany } from '../support/users';

/**
 * The board's read models over several domains: the attention queue, the work timeline, an
 * agent's runtime state, a run's events, export fidelity, the repositories picker.
 */
describe('board read models', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());

  const finish = (runId: string, status: string, extra: Record<string, unknown> = {}) =>
    t.dataSource.query(
      `UPDATE heartbeat_runs SET status = $2, finished_at = now(), error_code = $3, error = $4, exit_code = $5, usage_json = $6, result_json = $7 WHERE id = $1`,
      [
        runId,
        status,
        extra.errorCode ?? null,
        extra.error ?? null,
        extra.exitCode ?? null,
        extra.usage ? JSON.stringify(extra.usage) : null,
        extra.result ? JSON.stringify(extra.result) : null,
      ],
    );

  describe('GET /api/companies/:companyId/attention', () => {
    it('lists blocked issues, open questions, failed runs, budget incidents and agents in error, ranked; dismissals hide items', async () => {
      const co = await createCompany(t);
      const agent = await insertAgent(t, co.id, { name: 'Worker' });
      const erred = await insertAgent(t, co.id, { name: 'Broken', status: 'error' });
      const project = await createProject(t, co.id, { name: 'Attn' });
      const blocker = await createIssue(t, co.id, { title: 'Blocker', status: 'todo' });
      const blocked = await createIssue(t, co.id, {
        title: 'Stuck',
        status: 'blocked',
        projectId: project.id,
        blockedByIssueIds: [blocker.id],
      });
      const asked = await createIssue(t, co.id, { title: 'Question here', assigneeAgentId: agent.id });
      await t.http.post(`/api/issues/${asked.id}/interactions`).set(bearer(agent.token)).send({ prompt: 'Ship on Friday?' }).expect(201);
      const run = await sqlRun(t, co.id, agent.id, { issueId: asked.id });
      await finish(run, 'failed', { errorCode: 'adapter_exit_nonzero', exitCode: 2 });

      const res = (await t.http.get(`/api/companies/${co.id}/attention`).expect(200)).body;
      expect(res).toMatchObject({ companyId: co.id, totalCount: 4, deskBadgeCount: 4, nextCursor: null });
      expect(res.countsBySourceKind).toMatchObject({
        blocker_attention: 1,
        issue_thread_interaction: 1,
        failed_run: 1,
        agent_error_alert: 1,
        approval: 0,
      });
      const by = (k: string) => res.items.find((i: { sourceKind: string }) => i.sourceKind === k);
      expect(by('blocker_attention')).toMatchObject({
        id: `blocker_attention:${blocked.id}`,
        subject: {
          kind: 'issue',
          id: blocked.id,
          identifier: blocked.identifier,
          status: 'blocked',
          href: `/${blocked.identifier.split('-')[0]}/issues/${blocked.identifier}`,
        },
        project: { id: project.id, name: 'Attn' },
        detail: { kind: 'blocker', openBlockerCount: 1, firstBlockerIdentifier: blocker.identifier },
        dismissalKey: `attention:blocker:${blocked.id}`,
        dismissal: null,
        decisionVerbs: [],
        queues: [],
      });
      expect(by('issue_thread_interaction').whyNow).toContain('Ship on Friday?');
      expect(by('failed_run')).toMatchObject({ dismissalKey: `run:${run}`, relatedIssue: { id: asked.id } });
      expect(by('agent_error_alert').subject).toMatchObject({ kind: 'agent', id: erred.id, title: 'Broken' });
      expect(res.items.map((i: { rank: number }) => i.rank)).toEqual([1, 2, 3, 4]);

      // the caller dismisses one: gone from the list unless includeDismissed, still counted there
      await t.http
        .post(`/api/companies/${co.id}/inbox-dismissals`)
        .send({ itemKey: `run:${run}` })
        .expect(201);
      const after = (await t.http.get(`/api/companies/${co.id}/attention`).expect(200)).body;
      expect(after.totalCount).toBe(3);
      const all = (await t.http.get(`/api/companies/${co.id}/attention`).query({ includeDismissed: 'true' }).expect(200)).body;
      expect(all).toMatchObject({ totalCount: 4, deskBadgeCount: 3 });
      expect(all.items.find((i: { sourceKind: string }) => i.sourceKind === 'failed_run').dismissal).toMatchObject({ kind: 'dismiss' });

      // filters and pages
      const only = (await t.http.get(`/api/companies/${co.id}/attention`).query({ queue: 'blocker_attention' }).expect(200)).body;
      expect(only.items.map((i: { sourceKind: string }) => i.sourceKind)).toEqual(['blocker_attention']);
      const page = (await t.http.get(`/api/companies/${co.id}/attention`).query({ limit: 2 }).expect(200)).body;
      expect(page.items).toHaveLength(2);
      expect(page.nextCursor).toBe('2');
      const rest = (await t.http.get(`/api/companies/${co.id}/attention`).query({ limit: 2, cursor: page.nextCursor }).expect(200)).body;
      expect(rest.items).toHaveLength(1);
      // resolving the cause takes the item away
      await t.http.patch(`/api/issues/${blocked.id}`).send({ status: 'todo' }).expect(200);
      const resolved = (await t.http.get(`/api/companies/${co.id}/attention`).expect(200)).body;
      expect(resolved.countsBySourceKind.blocker_attention).toBe(0);
    });

    it('refuses bad input with 400; decision queues are []', async () => {
      const co = await createCompany(t);
      await t.http.get(`/api/companies/${co.id}/attention`).query({ queue: 'nope' }).expect(400);
      await t.http.get(`/api/companies/${co.id}/attention`).query({ limit: 0 }).expect(400);
      await t.http.get(`/api/companies/${co.id}/attention`).query({ activitySince: 'yesterday' }).expect(400);
      await t.http.get(`/api/companies/${randomUUID()}/attention`).expect(404);
      expect((await t.http.get(`/api/companies/${co.id}/decision-queues`).expect(200)).body).toEqual([]);
    });
  });

  describe('GET /api/companies/:companyId/timeline', () => {
    it('per issue in the window: runs as spans, creation and status changes as events, assignments as edges, with actor names', async () => {
      const co = await createCompany(t);
      const agent = await insertAgent(t, co.id, { name: 'Timeline Agent' });
      const issue = await createIssue(t, co.id, { title: 'On the timeline' });
      await t.http.patch(`/api/issues/${issue.id}`).send({ assigneeAgentId: agent.id }).expect(200);
      await t.http.patch(`/api/issues/${issue.id}`).send({ status: 'in_progress' }).expect(200);
      const run = await sqlRun(t, co.id, agent.id, { issueId: issue.id, invocationSource: 'assignment' });
      await finish(run, 'succeeded', { usage: { inputTokens: 10, outputTokens: 5, costCents: 3 } });
      await createIssue(t, co.id, { title: 'Other' });

      const res = (await t.http.get(`/api/companies/${co.id}/timeline`).expect(200)).body;
      expect(res.pagination).toEqual({ limit: 100, offset: 0, totalIssues: 2, hasMore: false });
      expect(res.window.capped).toBe(false);
      expect(res.actors).toEqual(
        expect.arrayContaining([
          { id: `agent:${agent.id}`, type: 'agent', name: 'Timeline Agent', avatar: null },
          { id: 'user:local-board', type: 'user', name: 'Local board', avatar: null },
        ]),
      );
      // the assignment queued a run of its own; ours is the finished one
      expect(
        res.spans.every((sp: { issueId: string; actorId: string }) => sp.issueId === issue.id && sp.actorId === `agent:${agent.id}`),
      ).toBe(true);
      expect(res.spans).toEqual(
        expect.arrayContaining([
          expect.objectContaining({
            actorId: `agent:${agent.id}`,
            runId: run,
            issueId: issue.id,
            issueIdentifier: issue.identifier,
            issueTitle: 'On the timeline',
            status: 'succeeded',
            invocationSource: 'assignment',
            usage: { inputTokens: 10, outputTokens: 5, costCents: 3 },
            end: expect.any(String),
          }),
        ]),
      );
      const mine = res.events.filter((e: { issueId: string }) => e.issueId === issue.id);
      expect(mine.map((e: { kind: string }) => e.kind)).toEqual(['created', 'status_changed']);
      expect(mine[1].status).toBe('in_progress');
      expect(res.edges).toEqual([
        { fromActorId: 'user:local-board', toActorId: `agent:${agent.id}`, issueId: issue.id, at: expect.any(String), kind: 'assignment' },
      ]);

      const one = (await t.http.get(`/api/companies/${co.id}/timeline`).query({ issueId: issue.id }).expect(200)).body;
      expect(one.pagination.totalIssues).toBe(1);
      const paged = (await t.http.get(`/api/companies/${co.id}/timeline`).query({ limit: 1 }).expect(200)).body;
      expect(paged.pagination).toMatchObject({ totalIssues: 2, hasMore: true });
      const old = (
        await t.http.get(`/api/companies/${co.id}/timeline`).query({ from: '2020-01-01T00:00:00Z', to: '2020-01-02T00:00:00Z' }).expect(200)
      ).body;
      expect(old).toMatchObject({ spans: [], events: [], edges: [], actors: [], pagination: { totalIssues: 0 } });
      const long = (await t.http.get(`/api/companies/${co.id}/timeline`).query({ from: '2000-01-01T00:00:00Z' }).expect(200)).body;
      expect(long.window.capped).toBe(true);
    });

    it('refuses bad input with 400', async () => {
      const co = await createCompany(t);
      await t.http.get(`/api/companies/${co.id}/timeline`).query({ from: 'soon' }).expect(400);
      await t.http.get(`/api/companies/${co.id}/timeline`).query({ projectId: 'x' }).expect(400);
      await t.http.get(`/api/companies/${co.id}/timeline`).query({ from: '2030-01-02T00:00:00Z', to: '2030-01-01T00:00:00Z' }).expect(400);
    });
  });

  describe('GET /api/agents/:agentId/runtime-state and GET /api/heartbeat-runs/:runId/events', () => {
    it("sums the agent's reported usage, names its last run and error and the session its next run resumes", async () => {
      const co = await createCompany(t);
      const agent = await insertAgent(t, co.id);
      const empty = (await t.http.get(`/api/agents/${agent.id}/runtime-state`).expect(200)).body;
      expect(empty).toMatchObject({
        agentId: agent.id,
        companyId: co.id,
        runCount: 0,
        sessionId: null,
        lastRunId: null,
        totalCostCents: 0,
      });
      const first = await sqlRun(t, co.id, agent.id);
      await finish(first, 'succeeded', {
        usage: { inputTokens: 100, cachedInputTokens: 20, outputTokens: 7, costCents: 4 },
        result: { sessionId: 'sess-1' },
      });
      const second = await sqlRun(t, co.id, agent.id);
      await finish(second, 'failed', {
        usage: { inputTokens: 50, outputTokens: 3, costCents: 2 },
        errorCode: 'adapter_exit_nonzero',
        error: 'exit 2',
      });
      const state = (await t.http.get(`/api/agents/${agent.id}/runtime-state`).query({ companyId: co.id }).expect(200)).body;
      expect(state).toMatchObject({
        adapterType: 'process',
        sessionId: 'sess-1',
        sessionDisplayId: 'sess-1',
        lastRunId: second,
        lastRunStatus: 'failed',
        lastError: 'exit 2',
        runCount: 2,
        totalInputTokens: 150,
        totalCachedInputTokens: 20,
        totalOutputTokens: 10,
        totalCostCents: 6,
        spentMonthlyCents: 0,
      });
      await t.http.get(`/api/agents/${randomUUID()}/runtime-state`).expect(404);
      const other = await createCompany(t);
      await t.http.get(`/api/agents/${agent.id}/runtime-state`).query({ companyId: other.id }).expect(404);
    });

    it("lists a finished run's events from its record: queued, started, usage, ended; afterSeq and limit page them", async () => {
      const co = await createCompany(t);
      const agent = await insertAgent(t, co.id);
      const run = await sqlRun(t, co.id, agent.id, { context: { reason: 'issue_assigned' }, invocationSource: 'assignment' });
      await finish(run, 'failed', {
        usage: { inputTokens: 9, outputTokens: 1, costCents: 1 },
        errorCode: 'adapter_exit_nonzero',
        error: 'exit 2',
        exitCode: 2,
      });
      const events = (await t.http.get(`/api/heartbeat-runs/${run}/events`).expect(200)).body;
      expect(events.map((e: { seq: number; eventType: string; level: string }) => [e.seq, e.eventType, e.level])).toEqual([
        [1, 'lifecycle', 'info'],
        [2, 'lifecycle', 'info'],
        [3, 'usage', 'info'],
        [4, 'lifecycle', 'error'],
      ]);
      expect(events[0]).toMatchObject({
        runId: run,
        agentId: agent.id,
        companyId: co.id,
        stream: 'system',
        message: 'run queued (assignment: issue_assigned)',
      });
      expect(events[2].payload).toMatchObject({ inputTokens: 9, outputTokens: 1, costCents: 1 });
      expect(events[3]).toMatchObject({
        message: 'run failed (exit code 2): exit 2',
        payload: { status: 'failed', exitCode: 2, errorCode: 'adapter_exit_nonzero' },
      });
      const after = (await t.http.get(`/api/heartbeat-runs/${run}/events`).query({ afterSeq: 2, limit: 1 }).expect(200)).body;
      expect(after.map((e: { seq: number }) => e.seq)).toEqual([3]);
      await t.http.get(`/api/heartbeat-runs/${run}/events`).query({ afterSeq: -1 }).expect(400);
      await t.http.get(`/api/heartbeat-runs/${randomUUID()}/events`).expect(404);
      // no run prepares a workspace here
      expect((await t.http.get(`/api/heartbeat-runs/${run}/workspace-operations`).expect(200)).body).toEqual([]);
      await t.http.get(`/api/heartbeat-runs/${randomUUID()}/workspace-operations`).expect(404);
    });
  });

  describe('provider traces', () => {
    it('never raw frames: the list is [] (runIds validated); a run names its OpenTelemetry trace when it has one', async () => {
      const co = await createCompany(t);
      const agent = await insertAgent(t, co.id);
      const run = await sqlRun(t, co.id, agent.id);
      const traceId = 'a'.repeat(32);
      await t.dataSource.query(`UPDATE heartbeat_runs SET trace_parent = $2 WHERE id = $1`, [run, `00-${traceId}-${'b'.repeat(16)}-01`]);
      expect((await t.http.get(`/api/companies/${co.id}/provider-traces`).query({ runIds: run }).expect(200)).body).toEqual([]);
      await t.http.get(`/api/companies/${co.id}/provider-traces`).query({ runIds: 'x,y' }).expect(400);
      expect((await t.http.get(`/api/heartbeat-runs/${run}/provider-trace`).expect(200)).body).toEqual({
        trace: null,
        entries: [],
        otel: { traceId, traceparent: `00-${traceId}-${'b'.repeat(16)}-01` },
      });
      const untraced = await sqlRun(t, co.id, agent.id);
      expect((await t.http.get(`/api/heartbeat-runs/${untraced}/provider-trace`).expect(200)).body.otel).toBeNull();
      await t.http.get(`/api/heartbeat-runs/${randomUUID()}/provider-trace`).expect(404);
      await t.http.get(`/api/heartbeat-runs/${run}/provider-trace`).set(bearer(agent.token)).expect(403);
    });
  });

  describe('GET /api/companies/:companyId/export/fidelity and project-repositories', () => {
    it("counts the company's records by kind: what an export keeps and drops, with a warning per dropped kind it holds", async () => {
      const co = await createCompany(t);
      const agent = await insertAgent(t, co.id);
      await createIssue(t, co.id);
      await sqlRun(t, co.id, agent.id);
      await t.http
        .post(`/api/companies/${co.id}/cost-events`)
        .send({ agentId: agent.id, provider: 'p', model: 'm', costCents: 5, occurredAt: new Date().toISOString() })
        .expect(201);
      const f = (await t.http.get(`/api/companies/${co.id}/export/fidelity`).expect(200)).body;
      expect(f).toMatchObject({ schema: 'export-fidelity/v1', companyId: co.id });
      expect(f.counts).toMatchObject({ agents: 1, issues: 1, heartbeatRuns: 1, costEvents: 1 });
      expect(f.kept.find((k: { kind: string }) => k.kind === 'agents')).toMatchObject({ count: 1 });
      expect(f.dropped.find((k: { kind: string }) => k.kind === 'costEvents')).toMatchObject({
        count: 1,
        note: 'cost history is not exported',
      });
      const codes = f.warnings.map((w: { code: string }) => w.code);
      expect(codes).toEqual(
        expect.arrayContaining([
          'costEvents_not_exported',
          'heartbeatRuns_not_exported',
          'activityEntries_not_exported',
          'issues_optional',
        ]),
      );
      expect(codes).not.toContain('approvals_not_exported');
      for (const w of f.warnings) expect(['warning', 'info']).toContain(w.severity);
    });

    it('project-repositories lists the repositories the workspaces name', async () => {
      const co = await createCompany(t);
      const p = await createProject(t, co.id, { workspace: { repoUrl: 'https://example.com/acme/app.git', repoRef: 'main' } });
      const res = (await t.http.get(`/api/companies/${co.id}/project-repositories`).expect(200)).body;
      expect(res).toEqual({
        repositories: [
          { id: p.workspaces[0].id, url: 'https://example.com/acme/app.git', name: 'app', defaultRef: 'main', projectId: p.id },
        ],
        connectionCount: 0,
        failedConnectionCount: 0,
      });
    });
  });
});

describe('board read models: who may call them (authenticated mode)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ env: AUTHENTICATED });
  });
  afterAll(() => t.close());

  it('no credentials 401; an agent on the board-only attention 403; another company refused', async () => {
    const { company, owner } = await ownedCompany(t);
    const other = await ownedCompany(t);
    const agent = await insertAgentWithKey(t, company.id);
    const run = await sqlRun(t, company.id, agent.agentId);
    for (const path of [
      `/api/companies/${company.id}/attention`,
      `/api/companies/${company.id}/timeline`,
      `/api/companies/${company.id}/export/fidelity`,
      `/api/agents/${agent.agentId}/runtime-state`,
      `/api/heartbeat-runs/${run}/events`,
    ]) {
      await t.http.get(path).expect(401);
      await t.http.get(path).set(auth(owner.token)).expect(200);
    }
    await t.http.get(`/api/companies/${company.id}/attention`).set(auth(agent.token)).expect(403);
    await t.http.get(`/api/companies/${company.id}/decision-queues`).set(auth(agent.token)).expect(403);
    // a non-CEO agent may not see the export of its company
    await t.http.get(`/api/companies/${company.id}/export/fidelity`).set(auth(agent.token)).expect(403);
    await t.http.get(`/api/companies/${company.id}/timeline`).set(auth(agent.token)).expect(200);
    await t.http.get(`/api/companies/${company.id}/attention`).set(auth(other.owner.token)).expect(403);
    await t.http.get(`/api/companies/${company.id}/timeline`).set(auth(other.owner.token)).expect(403);
    // a record of another company is never shown (refused or answered as unknown)
    for (const path of [`/api/agents/${agent.agentId}/runtime-state`, `/api/heartbeat-runs/${run}/events`]) {
      const res = await t.http.get(path).set(auth(other.owner.token));
      expect([403, 404]).toContain(res.status);
      expect(JSON.stringify(res.body)).not.toContain(company.id);
    }
  });
});
