import { bearer, createCompany } from '../support/factories';
import { createIssue } from '../support/issues';
import { insertAgent, insertAgentKey } from '../support/heartbeat';
import { createTestApp, TestApp } from '../support/test-app';

/** The board accepts an issue's plan document: child issues from its list items, recorded with the plan revision. */
describe('accepted plan decompositions', () => {
  let t: TestApp;
  let companyId: string;
  beforeAll(async () => {
    t = await createTestApp();
    companyId = (await createCompany(t)).id;
  });
  afterAll(() => t.close());

  const putPlan = async (issueId: string, body: string, baseRevisionId?: string) =>
    (
      await t.http
        .put(`/api/issues/${issueId}/documents/plan`)
        .send({ title: 'Plan', format: 'markdown', body, ...(baseRevisionId ? { baseRevisionId } : {}) })
        .expect((r) => {
          if (r.status >= 300) throw new Error(`put plan: ${r.status} ${JSON.stringify(r.body)}`);
        })
    ).body as { latestRevisionId: string; latestRevisionNumber: number };

  it('creates a child issue per list item of the latest revision and lists the decomposition', async () => {
    const issue = await createIssue(t, companyId, { title: 'Launch' });
    expect((await t.http.get(`/api/issues/${issue.id}/accepted-plan-decompositions`).expect(200)).body).toEqual([]);
    const plan = await putPlan(issue.id, '# Plan\n\n- Write the docs\n  with examples\n- [ ] Record the demo\n1. Publish\n');
    const res = await t.http
      .post(`/api/issues/${issue.identifier}/plan/accept`)
      .send({ baseRevisionId: plan.latestRevisionId })
      .expect(201);
    expect(res.body).toMatchObject({
      issueId: issue.id,
      companyId,
      documentKey: 'plan',
      revisionId: plan.latestRevisionId,
      revisionNumber: plan.latestRevisionNumber,
      acceptedByUserId: 'local-board',
    });
    expect(res.body.childIssues.map((c: { title: string }) => c.title)).toEqual(['Write the docs', 'Record the demo', 'Publish']);
    expect(res.body.childIssues.every((c: { parentId: string; status: string }) => c.parentId === issue.id && c.status === 'todo')).toBe(
      true,
    );
    const first = (await t.http.get(`/api/issues/${res.body.childIssues[0].id}`).expect(200)).body;
    expect(first.description).toBe('with examples');
    const listed = await t.http.get(`/api/issues/${issue.id}/accepted-plan-decompositions`).expect(200);
    expect(listed.body).toEqual([res.body]);
    const activity = (await t.http.get(`/api/issues/${issue.id}/activity`).expect(200)).body as Array<{
      action: string;
      details: Record<string, unknown>;
    }>;
    expect(activity.find((a) => a.action === 'issue.plan_accepted')?.details).toMatchObject({
      decompositionId: res.body.id,
      revisionId: plan.latestRevisionId,
    });
  });

  it('accepts a revision once (409), a changed plan again at its new revision, and refuses a stale base revision (409)', async () => {
    const issue = await createIssue(t, companyId);
    const v1 = await putPlan(issue.id, '- one\n- two');
    await t.http.post(`/api/issues/${issue.id}/plan/accept`).send({}).expect(201);
    expect((await t.http.post(`/api/issues/${issue.id}/plan/accept`).send({}).expect(409)).body.code).toBe(
      'plan_revision_already_accepted',
    );
    const v2 = await putPlan(issue.id, '- one\n- two\n- three', v1.latestRevisionId);
    const stale = await t.http.post(`/api/issues/${issue.id}/plan/accept`).send({ baseRevisionId: v1.latestRevisionId }).expect(409);
    expect(stale.body).toMatchObject({ code: 'stale_plan_revision', currentRevisionId: v2.latestRevisionId });
    const again = await t.http
      .post(`/api/issues/${issue.id}/plan/accept`)
      .send({ baseRevisionId: v2.latestRevisionId, childStatus: 'backlog' })
      .expect(201);
    expect(again.body.childIssues).toHaveLength(3);
    expect(again.body.childIssues[0].status).toBe('backlog');
    const listed = (await t.http.get(`/api/issues/${issue.id}/accepted-plan-decompositions`).expect(200)).body as Array<{
      revisionNumber: number;
    }>;
    expect(listed.map((d) => d.revisionNumber)).toEqual([2, 1]);
  });

  it('answers 404 without a plan, 422 for a plan without list items (no child created), 400 for bad input', async () => {
    const issue = await createIssue(t, companyId);
    await t.http.post(`/api/issues/${issue.id}/plan/accept`).send({}).expect(404);
    await putPlan(issue.id, 'Just prose, no tasks.');
    expect((await t.http.post(`/api/issues/${issue.id}/plan/accept`).send({}).expect(422)).body.code).toBe('plan_has_no_items');
    const children = await t.http.get(`/api/companies/${companyId}/issues?parentId=${issue.id}`).expect(200);
    expect(children.body).toEqual([]);
    await t.http.post(`/api/issues/${issue.id}/plan/accept`).send({ baseRevisionId: 'nope' }).expect(400);
    await t.http.post(`/api/issues/${issue.id}/plan/accept`).send({ childStatus: 'done' }).expect(400);
  });

  it('is board-only to accept; agents of the company read; another company gets 404', async () => {
    const issue = await createIssue(t, companyId);
    await putPlan(issue.id, '- a');
    const token = await insertAgentKey(t, await insertAgent(t, companyId));
    await t.http.post(`/api/issues/${issue.id}/plan/accept`).set(bearer(token)).send({}).expect(403);
    await t.http.get(`/api/issues/${issue.id}/accepted-plan-decompositions`).set(bearer(token)).expect(200);
    const other = await createCompany(t);
    const outsider = await insertAgentKey(t, await insertAgent(t, other.id));
    await t.http.get(`/api/issues/${issue.id}/accepted-plan-decompositions`).set(bearer(outsider)).expect(404);
  });
});
