import * as fs from 'node:fs';
import * as path from 'node:path';
import { createCompany } from '../support/factories';
import { alive, probeConfig, probeHostPid, scratchDir, startServer, TERMINAL, waitFor, waitRun } from '../support/heartbeat';
import { createTestApp, TestApp } from '../support/test-app';

/**
 * Stopping a scope stops its work for real: a running agent process (a real child) is killed and
 * its queued wakeups cancelled, whether the stop is an agent pause, a company archive or a budget
 * hard stop. Everything goes through the HTTP API.
 */
describe('stops kill in-flight runs', () => {
  let t: TestApp;
  let tmp: string;
  beforeAll(async () => {
    t = await createTestApp({ listen: true, scheduler: true });
    tmp = scratchDir('stops-');
  });
  afterAll(async () => {
    await t.close();
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  /** A process agent whose run sleeps; returns the agent, the run id and the child's pid. */
  async function sleepingRun(companyId: string, extra: Record<string, unknown> = {}) {
    const file = path.join(tmp, `${Math.random().toString(36).slice(2)}.json`);
    const agent = (
      await t.http
        .post(`/api/companies/${companyId}/agents`)
        .send({
          name: `Sleeper ${Math.random().toString(36).slice(2, 7)}`,
          role: 'general',
          adapterType: 'process',
          adapterConfig: probeConfig(file, 'sleep'),
          ...extra,
        })
        .expect(201)
    ).body;
    const wake = await t.http
      .post(`/api/agents/${agent.id}/wakeup`)
      .send({ source: 'on_demand', triggerDetail: 'manual', reason: 'stop test' })
      .expect(202);
    const runId = wake.body.id as string;
    await waitRun(t, runId, ['running']);
    const pid = await probeHostPid(file);
    expect(alive(pid)).toBe(true);
    return { agent, runId, pid };
  }

  const expectKilled = async (runId: string, pid: number) => {
    const run = await waitRun(t, runId, TERMINAL);
    expect(run.status).toBe('cancelled');
    // the run sleeps until killed: gone is the stop's doing
    await waitFor(async () => !alive(pid), `process ${pid} gone`);
  };

  it('pausing an agent kills its running process', async () => {
    const c = await createCompany(t);
    const { agent, runId, pid } = await sleepingRun(c.id);
    await t.http.post(`/api/agents/${agent.id}/pause`).send({}).expect(200);
    await expectKilled(runId, pid);
  });

  it('archiving the company pauses its agents and kills their running processes', async () => {
    const c = await createCompany(t);
    const { agent, runId, pid } = await sleepingRun(c.id);
    await t.http.post(`/api/companies/${c.id}/archive`).expect(200);
    await expectKilled(runId, pid);
    expect((await t.http.get(`/api/agents/${agent.id}`).expect(200)).body).toMatchObject({ status: 'paused' });
  });

  it('a queued run of a project held by a hard budget stop is never started (budget check before the claim)', async () => {
    const c = await createCompany(t);
    const agent = (
      await t.http
        .post(`/api/companies/${c.id}/agents`)
        .send({ name: 'Gatekept', role: 'general', adapterType: 'process', adapterConfig: { command: 'true' } })
        .expect(201)
    ).body;
    const project = (await t.http.post(`/api/companies/${c.id}/projects`).send({ name: 'Capped' }).expect(201)).body;
    await t.http
      .post(`/api/companies/${c.id}/budgets/policies`)
      .send({ scopeType: 'project', scopeId: project.id, amount: 50 })
      .expect(201);
    await t.http
      .post(`/api/companies/${c.id}/cost-events`)
      .send({ agentId: agent.id, projectId: project.id, provider: 'p', model: 'm', costCents: 50, occurredAt: new Date().toISOString() })
      .expect(201);
    // a run queued for the held project (as if it had been queued just before the stop)
    const [{ id: runId }] = await t.dataSource.query(
      `INSERT INTO heartbeat_runs (company_id, agent_id, status, invocation_source, adapter_type, context_snapshot)
       VALUES ($1, $2, 'queued', 'on_demand', 'process', $3) RETURNING id`,
      [c.id, agent.id, JSON.stringify({ projectId: project.id })],
    );
    const run = await waitRun(t, runId, TERMINAL, 10000);
    expect(run).toMatchObject({ status: 'cancelled', error_code: 'budget', started_at: null });
  });

  it('a cost event reaching the hard limit pauses the agent, kills its process, and later wakes conflict', async () => {
    const c = await createCompany(t);
    const { agent, runId, pid } = await sleepingRun(c.id, { budgetMonthlyCents: 100 });
    await t.http
      .post(`/api/companies/${c.id}/cost-events`)
      .send({ agentId: agent.id, provider: 'p', model: 'm', costCents: 100, occurredAt: new Date().toISOString() })
      .expect(201);
    await expectKilled(runId, pid);
    expect((await t.http.get(`/api/agents/${agent.id}`).expect(200)).body).toMatchObject({ status: 'paused' });
    await t.http.post(`/api/agents/${agent.id}/wakeup`).send({ source: 'on_demand' }).expect(409);
  });
});

describe('costs reported by adapters', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ listen: true });
  });
  afterAll(() => t.close());

  it('books the costCents an http adapter reports as one cost event of the run, counted in the company spend', async () => {
    const server = await startServer((_req, res) => {
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ summary: 'ok', usage: { provider: 'remote', model: 'm1', inputTokens: 12 }, costCents: 7 }));
    });
    try {
      const c = await createCompany(t);
      const agent = (
        await t.http
          .post(`/api/companies/${c.id}/agents`)
          .send({ name: 'Remote', role: 'general', adapterType: 'http', adapterConfig: { url: `${server.url}/hook` } })
          .expect(201)
      ).body;
      const runId = (await t.http.post(`/api/agents/${agent.id}/wakeup`).send({ source: 'on_demand' }).expect(202)).body.id;
      expect((await waitRun(t, runId, TERMINAL)).status).toBe('succeeded');
      const company = await waitFor(async () => {
        const got = (await t.http.get(`/api/companies/${c.id}`).expect(200)).body;
        return got.spentMonthlyCents === 7 && got;
      }, 'company spend');
      expect(company.spentMonthlyCents).toBe(7);
      const events = await t.dataSource.query(
        `SELECT cost_cents, provider, model, input_tokens FROM cost_events WHERE heartbeat_run_id = $1`,
        [runId],
      );
      expect(events).toEqual([{ cost_cents: 7, provider: 'remote', model: 'm1', input_tokens: '12' }]);
    } finally {
      await server.close();
    }
  });
});
