import * as path from 'node:path';
import { createCompany } from '../support/factories';
import { FIXTURES, insertAgent, TERMINAL, waitRun, wakeRun } from '../support/heartbeat';
import { createTestApp, TestApp } from '../support/test-app';

describe('a scripted agent does a full heartbeat through the API', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ listen: true });
  });
  afterAll(() => t.close());

  it('checks out its issue, comments, marks it done and reports a cost; the run succeeds', async () => {
    const co = await createCompany(t, { budgetMonthlyCents: 100000 });
    const agent = await insertAgent(t, co.id, {
      adapterConfig: { command: process.execPath, args: [path.join(FIXTURES, 'scripted-agent.js')], timeoutSec: 60 },
    });
    const created = await t.http
      .post(`/api/companies/${co.id}/issues`)
      .send({ title: 'Scripted work', status: 'todo', assigneeAgentId: agent.id });
    expect(created.status).toBe(201);
    const issueId = created.body.id as string;
    const runId = await wakeRun(t, agent.id, { source: 'assignment', triggerDetail: 'system', payload: { issueId } });
    const run = await waitRun(t, runId, TERMINAL, 30000);
    const log = await t.http.get(`/api/heartbeat-runs/${runId}/log?limitBytes=1048576`);
    expect({ status: run.status, log: run.status === 'succeeded' ? '' : log.body.content }).toEqual({ status: 'succeeded', log: '' });
    const issue = await t.http.get(`/api/issues/${issueId}`).expect(200);
    expect(issue.body.status).toBe('done');
    const comments = await t.http.get(`/api/issues/${issueId}/comments`).expect(200);
    const list = Array.isArray(comments.body) ? comments.body : comments.body.items;
    expect(list.some((c: { body: string }) => c.body.includes(runId))).toBe(true);
    const [{ n }] = await t.dataSource.query(`SELECT count(*)::int AS n FROM cost_events WHERE heartbeat_run_id = $1`, [runId]);
    expect(n).toBe(1);
  });
});
