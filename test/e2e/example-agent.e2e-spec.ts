import * as path from 'node:path';
import { sleep } from '../support/heartbeat';
import { createTestApp, TestApp } from '../support/test-app';

// as root the agent runs under its own uid: from a checkout it cannot read, the readable copy (global-setup)
const EXAMPLE = process.env.TEST_FIXTURES_DIR
  ? path.join(process.env.TEST_FIXTURES_DIR, 'examples', 'agents', 'first-agent.js')
  : path.join(__dirname, '..', '..', 'examples', 'agents', 'first-agent.js');

/**
 * The README's "first agent in five minutes", through HTTP only: a company, the example agent of
 * examples/agents/ hired with the `process` adapter, an issue assigned to it (the assignment wakes
 * it), the run, and what it leaves behind (the issue done, its comment, its cost on the reports).
 */
describe('the example agent (examples/agents/first-agent.js)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ listen: true });
  });
  afterAll(() => t.close());

  it('is woken by an assignment, checks its issue out, comments, books its cost and finishes the issue', async () => {
    const co = (await t.http.post('/api/companies').send({ name: 'First Co', budgetMonthlyCents: 10_000 }).expect(201)).body;
    const agent = (
      await t.http
        .post(`/api/companies/${co.id}/agents`)
        .send({
          name: 'Ada',
          role: 'engineer',
          adapterType: 'process',
          adapterConfig: { command: 'node', args: [EXAMPLE], timeoutSec: 60 },
        })
        .expect(201)
    ).body;
    const issue = (
      await t.http
        .post(`/api/companies/${co.id}/issues`)
        .send({ title: 'Say hello', status: 'todo', assigneeAgentId: agent.id })
        .expect(201)
    ).body;

    let run: { id: string; status: string } | undefined;
    for (const deadline = Date.now() + 60_000; Date.now() < deadline; await sleep(200)) {
      const runs = (await t.http.get(`/api/companies/${co.id}/heartbeat-runs?agentId=${agent.id}`).expect(200)).body;
      run = runs.find((r: { status: string }) => !['queued', 'running'].includes(r.status));
      if (run) break;
    }
    const log = run ? (await t.http.get(`/api/heartbeat-runs/${run.id}/log?limitBytes=1048576`).expect(200)).body.content : '';
    expect({ status: run?.status, log: run?.status === 'succeeded' ? '' : log }).toEqual({ status: 'succeeded', log: '' });
    expect(log).toContain(`${issue.identifier} is done`);

    expect((await t.http.get(`/api/issues/${issue.id}`).expect(200)).body).toMatchObject({ status: 'done' });
    const comments = (await t.http.get(`/api/issues/${issue.id}/comments`).expect(200)).body;
    const list = Array.isArray(comments) ? comments : comments.items;
    expect(list).toEqual([expect.objectContaining({ authorAgentId: agent.id, body: expect.stringContaining('Hello from Ada') })]);

    const summary = (await t.http.get(`/api/companies/${co.id}/costs/summary`).expect(200)).body;
    expect(summary).toMatchObject({ spendCents: 3, eventCount: 1 });
    const byAgent = (await t.http.get(`/api/companies/${co.id}/costs/by-agent`).expect(200)).body;
    expect(byAgent).toEqual([expect.objectContaining({ agentId: agent.id, costCents: 3, inputTokens: 1200, outputTokens: 300 })]);
    const dashboard = (await t.http.get(`/api/companies/${co.id}/dashboard`).expect(200)).body;
    expect(dashboard.tasks).toMatchObject({ done: 1 });
  });
});
