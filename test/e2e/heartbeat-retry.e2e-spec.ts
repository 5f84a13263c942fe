import * as os from 'node:os';
import { createCompany } from '../support/factories';
import { FAST_ENGINE_ENV, insertAgent, sleep, TERMINAL, waitFor, waitRun } from '../support/heartbeat';
import { createTestApp, TestApp } from '../support/test-app';

/** A running run claimed by a dead process of this host, with a wake context, as a crash leaves it. */
async function lostRun(t: TestApp, agent: { id: string; companyId: string }, context: Record<string, unknown> = {}): Promise<string> {
  const snapshot = {
    source: 'assignment',
    triggerDetail: 'system',
    reason: 'issue_assigned',
    payload: { why: 'delegated' },
    issueId: null,
    commentId: null,
    forceFreshSession: false,
    wakeupRequestIds: [],
    ...context,
  };
  const [r] = await t.dataSource.query(
    `INSERT INTO heartbeat_runs (company_id, agent_id, status, invocation_source, adapter_type, started_at, claimed_by, lease_expires_at, context_snapshot)
     VALUES ($1, $2, 'running', 'assignment', 'process', now() - interval '1 minute', $3, now() + interval '1 hour', $4) RETURNING id`,
    [agent.companyId, agent.id, `${os.hostname()}-999999-abcdef`, JSON.stringify(snapshot)],
  );
  return r.id;
}

const runsOf = async (t: TestApp, agentId: string) =>
  t.dataSource.query(`SELECT id, status, error_code, context_snapshot FROM heartbeat_runs WHERE agent_id = $1 ORDER BY created_at`, [
    agentId,
  ]);

describe('runs lost with their instance are re-queued once', () => {
  let t: TestApp;
  let companyId: string;
  beforeAll(async () => {
    t = await createTestApp({ scheduler: true, env: FAST_ENGINE_ENV });
    companyId = (await createCompany(t)).id;
  });
  afterAll(() => t.close());

  it('re-queues an orphaned run for the same wake context; the retry runs', async () => {
    const agent = await insertAgent(t, companyId, { adapterConfig: { command: 'true' } });
    const lost = await lostRun(t, agent);
    expect(await waitRun(t, lost, TERMINAL, 5000)).toMatchObject({ status: 'failed', error_code: 'orphaned_run' });
    const retry = await waitFor(async () => (await runsOf(t, agent.id))[1], 'retry run', 5000);
    expect(retry.context_snapshot).toMatchObject({
      source: 'assignment',
      reason: 'issue_assigned',
      payload: { why: 'delegated' },
      retryOfRunId: lost,
    });
    expect(await waitRun(t, retry.id, TERMINAL)).toMatchObject({ status: 'succeeded' });
    const [wake] = await t.dataSource.query(`SELECT retry_of_run_id, source, reason FROM agent_wakeup_requests WHERE run_id = $1`, [
      retry.id,
    ]);
    expect(wake).toEqual({ retry_of_run_id: lost, source: 'assignment', reason: 'issue_assigned' });
    const acts = await t.dataSource.query(
      `SELECT action, details FROM activity_log WHERE entity_id = $1 AND action LIKE 'heartbeat.run_retr%'`,
      [lost],
    );
    expect(acts).toEqual([
      { action: 'heartbeat.run_retried', details: expect.objectContaining({ newRunId: retry.id, errorCode: 'orphaned_run' }) },
    ]);
  });

  it('a retried run lost again stays failed (no second retry)', async () => {
    const agent = await insertAgent(t, companyId, { adapterConfig: { command: 'true' } });
    const [wake] = await t.dataSource.query(
      `INSERT INTO agent_wakeup_requests (company_id, agent_id, source, status, retry_of_run_id) VALUES ($1, $2, 'assignment', 'claimed', gen_random_uuid()) RETURNING id`,
      [companyId, agent.id],
    );
    const lost = await lostRun(t, agent, { wakeupRequestIds: [wake.id] });
    expect(await waitRun(t, lost, TERMINAL, 5000)).toMatchObject({ status: 'failed', error_code: 'orphaned_run' });
    await sleep(600);
    expect(await runsOf(t, agent.id)).toHaveLength(1);
    const [act] = await t.dataSource.query(
      `SELECT details FROM activity_log WHERE entity_id = $1 AND action = 'heartbeat.run_retry_skipped'`,
      [lost],
    );
    expect(act.details).toMatchObject({ reason: 'already_retried' });
  });

  it('does not re-queue for a paused or terminated agent', async () => {
    for (const status of ['paused', 'terminated']) {
      const agent = await insertAgent(t, companyId, { adapterConfig: { command: 'true' }, status });
      const lost = await lostRun(t, agent);
      expect(await waitRun(t, lost, TERMINAL, 5000)).toMatchObject({ status: 'failed', error_code: 'orphaned_run' });
      await sleep(400);
      expect(await runsOf(t, agent.id)).toHaveLength(1);
      const [act] = await t.dataSource.query(
        `SELECT details FROM activity_log WHERE entity_id = $1 AND action = 'heartbeat.run_retry_skipped'`,
        [lost],
      );
      expect(act.details).toMatchObject({ reason: `agent_${status}` });
    }
  });

  it('does not re-queue when a budget blocks the agent', async () => {
    const agent = await insertAgent(t, companyId, { adapterConfig: { command: 'true' } });
    await t.http
      .post(`/api/companies/${companyId}/budgets/policies`)
      .send({ scopeType: 'agent', scopeId: agent.id, amount: 10 })
      .expect(201);
    await t.http
      .post(`/api/companies/${companyId}/cost-events`)
      .send({ agentId: agent.id, provider: 'p', model: 'm', costCents: 10, occurredAt: new Date().toISOString() })
      .expect(201);
    await t.dataSource.query(`UPDATE agents SET status = 'idle' WHERE id = $1`, [agent.id]); // blocked by the budget, not by a pause
    const lost = await lostRun(t, agent);
    expect(await waitRun(t, lost, TERMINAL, 5000)).toMatchObject({ status: 'failed', error_code: 'orphaned_run' });
    await sleep(400);
    expect(await runsOf(t, agent.id)).toHaveLength(1);
    const [act] = await t.dataSource.query(
      `SELECT details FROM activity_log WHERE entity_id = $1 AND action = 'heartbeat.run_retry_skipped'`,
      [lost],
    );
    expect(act.details).toMatchObject({ reason: 'budget' });
  });
});
