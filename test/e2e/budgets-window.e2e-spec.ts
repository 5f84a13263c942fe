import { Logger } from '@nestjs/common';
import { ModulesContainer } from '@nestjs/core';
import { SchedulerRegistry } from '@nestjs/schedule';
import { BudgetGate } from '../../src/modules/budgets/budget-gate.service';
import { BUDGET_WINDOW_JOB, BudgetsScheduler } from '../../src/modules/budgets/budgets.jobs';
import { Clock } from '../../src/modules/budgets/clock.service';
import { createCompany } from '../support/factories';
import { agentRow, budgetOverview, companyRow, insertAgent, insertProject, reportCost } from '../support/costs';
import { createTestApp, TestApp } from '../support/test-app';

describe('budget windows: the UTC month boundary', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());

  const tick = (app: TestApp = t) => app.app.get(BudgetsScheduler).tick();
  const setNow = (at: string, app: TestApp = t) => app.app.get(Clock).set(at);

  it('resets spentMonthlyCents at the first instant of the month and lifts holds whose month expired, once', async () => {
    setNow('2026-01-31T23:00:00.000Z');
    expect(await tick()).toBe(true); // starts January (nothing to reset yet)
    expect(await tick()).toBe(false);

    const c = await createCompany(t, { budgetMonthlyCents: 100_000 });
    const a = await insertAgent(t, c.id, { budgetMonthlyCents: 1000 });
    const b = await insertAgent(t, c.id, { budgetMonthlyCents: 100 });
    const p = await insertProject(t, c.id);
    await t.http.post(`/api/companies/${c.id}/budgets/policies`).send({ scopeType: 'project', scopeId: p.id, amount: 50 }).expect(201);
    await reportCost(t, c.id, a.id, 1000, { occurredAt: '2026-01-31T22:00:00.000Z' }).expect(201);
    await reportCost(t, c.id, b.id, 100, { occurredAt: '2026-01-31T22:30:00.000Z', projectId: p.id }).expect(201);
    expect(await agentRow(t, a.id)).toMatchObject({ status: 'paused', pause_reason: 'budget', spent_monthly_cents: 1000 });
    expect((await companyRow(t, c.id)).spent_monthly_cents).toBe(1100);
    // the board keeps b paused for this month
    const bIncident = (await budgetOverview(t, c.id)).activeIncidents.find(
      (i: { scopeId: string; kind: string }) => i.scopeId === b.id && i.kind === 'hard',
    );
    await t.http.post(`/api/companies/${c.id}/budget-incidents/${bIncident.id}/resolve`).send({ action: 'keep_paused' }).expect(200);

    setNow('2026-01-31T23:59:59.999Z');
    expect(await tick()).toBe(false); // still January
    expect((await agentRow(t, a.id)).status).toBe('paused');

    setNow('2026-02-01T00:00:00.000Z');
    expect(await tick()).toBe(true);
    expect(await agentRow(t, a.id)).toMatchObject({ status: 'idle', pause_reason: null, spent_monthly_cents: 0 });
    expect(await agentRow(t, b.id)).toMatchObject({ status: 'idle', spent_monthly_cents: 0 });
    expect((await companyRow(t, c.id)).spent_monthly_cents).toBe(0);
    const incidents = await t.dataSource.query(
      `SELECT scope_type, status, resolution, hold_active FROM budget_incidents WHERE company_id = $1 AND kind = 'hard' ORDER BY scope_type`,
      [c.id],
    );
    expect(incidents).toEqual(
      expect.arrayContaining([
        { scope_type: 'agent', status: 'resolved', resolution: 'window_reset', hold_active: false },
        { scope_type: 'agent', status: 'resolved', resolution: 'keep_paused', hold_active: false },
        // the project's budget is lifetime: its hold does not expire with the month
        { scope_type: 'project', status: 'open', resolution: null, hold_active: true },
      ]),
    );
    const [project] = await t.dataSource.query(`SELECT pause_reason FROM projects WHERE id = $1`, [p.id]);
    expect(project.pause_reason).toBe('budget');
    const gate = t.app.get(BudgetGate);
    expect(await gate.checkBeforeRun(c.id, a.id)).toEqual({ allowed: true });
    expect((await gate.checkBeforeRun(c.id, a.id, p.id)).allowed).toBe(false);
    const lifted = await t.dataSource.query(`SELECT entity_id FROM activity_log WHERE company_id = $1 AND action = 'budget.hold_lifted'`, [
      c.id,
    ]);
    expect(lifted.map((r: { entity_id: string }) => r.entity_id).sort()).toEqual([a.id, b.id].sort());
    expect(await tick()).toBe(false);

    // the new window counts from zero; a late January report does not touch February's spend
    await reportCost(t, c.id, a.id, 100, { occurredAt: '2026-02-01T00:00:00.000Z' }).expect(201);
    await reportCost(t, c.id, a.id, 999, { occurredAt: '2026-01-31T23:30:00.000Z' }).expect(201);
    expect(await agentRow(t, a.id)).toMatchObject({ status: 'idle', spent_monthly_cents: 100 });
    const policy = (await budgetOverview(t, c.id)).policies.find((x: { scopeId: string }) => x.scopeId === a.id);
    expect(policy).toMatchObject({ windowStart: '2026-02-01T00:00:00.000Z', windowEnd: '2026-03-01T00:00:00.000Z', observedAmount: 100 });
  });

  it('starts a month exactly once across two instances on one database', async () => {
    const t2 = await createTestApp({ databaseUrl: t.databaseUrl });
    try {
      setNow('2026-03-01T00:00:01.000Z');
      setNow('2026-03-01T00:00:01.000Z', t2);
      const results = await Promise.all([tick(), tick(t2), tick(), tick(t2)]);
      expect(results.filter(Boolean)).toHaveLength(1);
      const claims = await t.dataSource.query(`SELECT 1 FROM budget_window_resets WHERE window_start = '2026-03-01T00:00:00Z'`);
      expect(claims).toHaveLength(1);
    } finally {
      await t2.close();
    }
  });
  it('one company whose month start fails is logged and the others still start the month', async () => {
    setNow('2026-04-10T00:00:00.000Z');
    await tick(); // April
    const broken = await createCompany(t);
    const ba = await insertAgent(t, broken.id, { budgetMonthlyCents: 1000 });
    const healthy = await createCompany(t);
    const ha = await insertAgent(t, healthy.id, { budgetMonthlyCents: 1000 });
    for (const [co, ag] of [
      [broken.id, ba.id],
      [healthy.id, ha.id],
    ]) {
      await reportCost(t, co, ag, 1000, { occurredAt: '2026-04-09T12:00:00.000Z' }).expect(201);
      expect(await agentRow(t, ag)).toMatchObject({ status: 'paused', pause_reason: 'budget', spent_monthly_cents: 1000 });
    }
    // the broken company's agent cannot be resumed (its row refuses the update)
    await t.dataSource.query(`
      CREATE FUNCTION test_fail_resume() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF NEW.company_id = '${broken.id}' AND NEW.status = 'idle' THEN RAISE EXCEPTION 'agent row refused'; END IF;
        RETURN NEW;
      END $$;
      CREATE TRIGGER test_fail_resume BEFORE UPDATE ON agents FOR EACH ROW EXECUTE FUNCTION test_fail_resume();`);
    const errors = jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
    let logged: string[];
    try {
      setNow('2026-05-01T00:00:00.000Z');
      expect(await tick()).toBe(true);
    } finally {
      logged = errors.mock.calls.map((c) => String(c[0]));
      errors.mockRestore();
      await t.dataSource.query(`DROP TRIGGER test_fail_resume ON agents; DROP FUNCTION test_fail_resume();`);
    }
    expect(logged.some((m) => m.includes(`company ${broken.id}`) && m.includes('agent row refused'))).toBe(true);
    expect(logged.some((m) => m.includes(healthy.id))).toBe(false);

    // the healthy company started May: spend reset, hold lifted, agent resumed, recorded
    expect(await agentRow(t, ha.id)).toMatchObject({ status: 'idle', pause_reason: null, spent_monthly_cents: 0 });
    expect((await companyRow(t, healthy.id)).spent_monthly_cents).toBe(0);
    const overview = await budgetOverview(t, healthy.id);
    expect(overview.activeIncidents).toEqual([]);
    const lifted = await t.dataSource.query(`SELECT entity_id FROM activity_log WHERE company_id = $1 AND action = 'budget.hold_lifted'`, [
      healthy.id,
    ]);
    expect(lifted.map((r: { entity_id: string }) => r.entity_id)).toEqual([ha.id]);
    // the broken company's step rolled back as a whole: still April's state
    expect(await agentRow(t, ba.id)).toMatchObject({ status: 'paused', pause_reason: 'budget', spent_monthly_cents: 1000 });
    expect((await budgetOverview(t, broken.id)).activeIncidents).toEqual(
      expect.arrayContaining([expect.objectContaining({ scopeId: ba.id, kind: 'hard', status: 'open', holdActive: true })]),
    );
    // the month started once
    expect(await tick()).toBe(false);

    // the next month start lifts what the failure left
    setNow('2026-06-01T00:00:00.000Z');
    expect(await tick()).toBe(true);
    expect(await agentRow(t, ba.id)).toMatchObject({ status: 'idle', pause_reason: null, spent_monthly_cents: 0 });
  });
});

describe('budget windows: the scheduled tick', () => {
  it('is registered only when the app runs its scheduler', async () => {
    const on = await createTestApp({ scheduler: true });
    const off = await createTestApp();
    try {
      expect(on.app.get(SchedulerRegistry).getCronJob(BUDGET_WINDOW_JOB)).toBeDefined();
      const hasSchedule = (x: TestApp) => [...x.app.get(ModulesContainer).values()].some((m) => m.metatype?.name === 'ScheduleModule');
      expect(hasSchedule(on)).toBe(true);
      expect(hasSchedule(off)).toBe(false);
    } finally {
      await on.close();
      await off.close();
    }
  });
});
