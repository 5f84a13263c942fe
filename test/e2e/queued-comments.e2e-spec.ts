import { createAgentWithKey } from '../support/agents';
import { bearer, createCompany } from '../support/factories';
import { waitFor } from '../support/heartbeat';
import { createTestApp, TestApp } from '../support/test-app';

describe('GET /api/issues/:issueId/queued-comments', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());

  it("lists the comments whose wake waits behind the assignee's live run, and drops them once a run takes them", async () => {
    const c = await createCompany(t);
    const { agent } = await createAgentWithKey(t, c.id, { adapterConfig: { command: 'sleep', args: ['30'], timeoutSec: 120 } });
    const issue = (
      await t.http.post(`/api/companies/${c.id}/issues`).send({ title: 'long job', status: 'todo', assigneeAgentId: agent.id }).expect(201)
    ).body;
    const live = async () =>
      (await t.http.get(`/api/issues/${issue.id}/live-runs`).expect(200)).body as Array<{ id: string; status: string }>;
    const first = await waitFor(async () => (await live()).find((r) => r.status === 'running'), 'assignment run running');
    expect((await t.http.get(`/api/issues/${issue.identifier}/queued-comments`).expect(200)).body).toEqual([]);

    const one = (await t.http.post(`/api/issues/${issue.id}/comments`).send({ body: 'also check the footer' }).expect(201)).body;
    const two = (await t.http.post(`/api/issues/${issue.id}/comments`).send({ body: 'and the header' }).expect(201)).body;
    const queued = (await t.http.get(`/api/issues/${issue.id}/queued-comments`).expect(200)).body as Array<{ id: string; body: string }>;
    expect(queued.map((q) => q.id)).toEqual([one.id, two.id]);
    expect(queued[0]).toMatchObject({ issueId: issue.id, body: 'also check the footer' });

    // another company's agent cannot read them; an unknown issue is 404
    const other = await createCompany(t);
    const { token } = await createAgentWithKey(t, other.id);
    await t.http.get(`/api/issues/${issue.id}/queued-comments`).set(bearer(token)).expect(404);
    await t.http.get('/api/issues/00000000-0000-4000-8000-000000000000/queued-comments').expect(404);

    // the live run ends: a new run takes the comments and starts; nothing is queued any more
    await t.http.post(`/api/heartbeat-runs/${first.id}/cancel`).expect(200);
    await waitFor(async () => (await live()).some((r) => r.id !== first.id && r.status === 'running'), 'follow-up run running');
    expect((await t.http.get(`/api/issues/${issue.id}/queued-comments`).expect(200)).body).toEqual([]);
    for (const r of await live()) await t.http.post(`/api/heartbeat-runs/${r.id}/cancel`);
  });
});
