import { spawn } from 'node:child_process';
import { CancellationScope, WorkCancellation } from '../../src/common/events/work-cancellation.port';
import { Db } from '../../src/database/db.service';
import { BudgetGate } from '../../src/modules/budgets/budget-gate.service';
import { BudgetsScheduler } from '../../src/modules/budgets/budgets.jobs';
import { bearer, createCompany } from '../support/factories';
import {
  agentRow,
  budgetOverview,
  companyRow,
  insertAgent,
  insertAgentKey,
  insertProject,
  insertRun,
  insertWakeup,
  reportCost,
  unknownId,
} from '../support/costs';
import { createTestApp, TestApp } from '../support/test-app';

interface Incident {
  id: string;
  kind: string;
  status: string;
  scopeType: string;
  scopeId: string;
  holdActive: boolean;
}

describe('budgets', () => {
  let t: TestApp;
  const cancellations: Array<{ scope: CancellationScope; reason: string }> = [];
  beforeAll(async () => {
    t = await createTestApp();
    t.app.get(WorkCancellation).register(async (scope, reason) => {
      cancellations.push({ scope, reason });
    });
  });
  afterAll(() => t.close());
  beforeEach(() => {
    cancellations.length = 0;
  });

  const incidents = async (companyId: string, kind?: string): Promise<Incident[]> =>
    ((await budgetOverview(t, companyId)).activeIncidents as Incident[]).filter((i) => !kind || i.kind === kind);
  const gate = () => t.app.get(BudgetGate);
  const upsertPolicy = (companyId: string, body: Record<string, unknown>) =>
    t.http.post(`/api/companies/${companyId}/budgets/policies`).send(body);

  describe('PATCH /api/companies/:companyId/budgets', () => {
    it('sets budgetMonthlyCents and syncs a calendar-month UTC billed_cents policy with the defaults', async () => {
      const c = await createCompany(t);
      const res = await t.http.patch(`/api/companies/${c.id}/budgets`).send({ budgetMonthlyCents: 5000 }).expect(200);
      expect(res.body).toMatchObject({ id: c.id, companyId: c.id, scopeType: 'company', budgetMonthlyCents: 5000, spentMonthlyCents: 0 });
      expect(res.body.policy).toMatchObject({
        metric: 'billed_cents',
        windowKind: 'calendar_month_utc',
        amount: 5000,
        warnPercent: 80,
        hardStopEnabled: true,
        notifyEnabled: true,
        isActive: true,
      });
      expect((await companyRow(t, c.id)).budget_monthly_cents).toBe(5000);
      const summary = await t.http.get(`/api/companies/${c.id}/costs/summary`).expect(200);
      expect(summary.body.budgetCents).toBe(5000);
      const overview = await budgetOverview(t, c.id);
      expect(overview.policies).toHaveLength(1);
      const [activity] = await t.dataSource.query(
        `SELECT action, entity_id FROM activity_log WHERE company_id = $1 AND action = 'company.budget_updated'`,
        [c.id],
      );
      expect(activity.entity_id).toBe(c.id);
    });

    it('0 deactivates the policy', async () => {
      const c = await createCompany(t, { budgetMonthlyCents: 100 });
      const res = await t.http.patch(`/api/companies/${c.id}/budgets`).send({ budgetMonthlyCents: 0 }).expect(200);
      expect(res.body.policy).toMatchObject({ isActive: false, state: 'inactive' });
    });

    it('validates the body (400), refuses agents (403) and unknown companies (404)', async () => {
      const c = await createCompany(t);
      for (const body of [{}, { budgetMonthlyCents: -1 }, { budgetMonthlyCents: 1.5 }, { budgetMonthlyCents: '100' }]) {
        await t.http.patch(`/api/companies/${c.id}/budgets`).send(body).expect(400);
      }
      const a = await insertAgent(t, c.id);
      const token = await insertAgentKey(t, a);
      await t.http.patch(`/api/companies/${c.id}/budgets`).set(bearer(token)).send({ budgetMonthlyCents: 1 }).expect(403);
      await t.http.patch(`/api/companies/${unknownId()}/budgets`).send({ budgetMonthlyCents: 1 }).expect(404);
    });
  });

  describe('PATCH /api/agents/:agentId/budgets', () => {
    it('sets the agent budget and syncs its monthly policy', async () => {
      const c = await createCompany(t);
      const a = await insertAgent(t, c.id);
      const res = await t.http.patch(`/api/agents/${a.id}/budgets`).send({ budgetMonthlyCents: 1000 }).expect(200);
      expect(res.body).toMatchObject({ id: a.id, companyId: c.id, budgetMonthlyCents: 1000 });
      const overview = (await t.http.get(`/api/companies/${c.id}/budgets/overview`).expect(200)).body;
      expect(JSON.stringify(overview)).toContain(a.id);
      const [policy] = await t.dataSource.query(
        `SELECT amount, window_kind FROM budget_policies WHERE scope_type = 'agent' AND scope_id = $1`,
        [a.id],
      );
      expect(policy).toEqual({ amount: 1000, window_kind: 'calendar_month_utc' });
      expect((await agentRow(t, a.id)).budget_monthly_cents).toBe(1000);
      const [activity] = await t.dataSource.query(
        `SELECT entity_id FROM activity_log WHERE action = 'agent.budget_updated' AND company_id = $1`,
        [c.id],
      );
      expect(activity.entity_id).toBe(a.id);
    });

    it('404 for unknown or malformed agent ids, 403 for agent callers, 400 for bad input', async () => {
      await t.http.patch(`/api/agents/${unknownId()}/budgets`).send({ budgetMonthlyCents: 1 }).expect(404);
      await t.http.patch(`/api/agents/nope/budgets`).send({ budgetMonthlyCents: 1 }).expect(404);
      const c = await createCompany(t);
      const a = await insertAgent(t, c.id);
      const token = await insertAgentKey(t, a);
      await t.http.patch(`/api/agents/${a.id}/budgets`).set(bearer(token)).send({ budgetMonthlyCents: 1 }).expect(403);
      await t.http.patch(`/api/agents/${a.id}/budgets`).send({ budgetMonthlyCents: -5 }).expect(400);
    });
  });

  describe('POST /api/companies/:companyId/budgets/policies', () => {
    it('creates a project policy with a lifetime window by default (201), then updates it (200) keeping omitted fields', async () => {
      const c = await createCompany(t);
      const p = await insertProject(t, c.id);
      const created = await upsertPolicy(c.id, { scopeType: 'project', scopeId: p.id, amount: 300, warnPercent: 50 }).expect(201);
      expect(created.body).toMatchObject({
        scopeType: 'project',
        scopeId: p.id,
        metric: 'billed_cents',
        windowKind: 'lifetime',
        windowEnd: null,
        amount: 300,
        warnPercent: 50,
        hardStopEnabled: true,
        notifyEnabled: true,
        isActive: true,
      });
      const updated = await upsertPolicy(c.id, { scopeType: 'project', scopeId: p.id, amount: 400, hardStopEnabled: false }).expect(200);
      expect(updated.body).toMatchObject({ id: created.body.id, amount: 400, warnPercent: 50, hardStopEnabled: false });
    });

    it('defaults the company scope id and keeps budgetMonthlyCents equal to the monthly billed policy', async () => {
      const c = await createCompany(t);
      await upsertPolicy(c.id, { scopeType: 'company', amount: 777 }).expect(201);
      expect((await companyRow(t, c.id)).budget_monthly_cents).toBe(777);
      const a = await insertAgent(t, c.id);
      await upsertPolicy(c.id, { scopeType: 'agent', scopeId: a.id, amount: 55 }).expect(201);
      expect((await agentRow(t, a.id)).budget_monthly_cents).toBe(55);
      await upsertPolicy(c.id, { scopeType: 'agent', scopeId: a.id, amount: 55, isActive: false }).expect(200);
      expect((await agentRow(t, a.id)).budget_monthly_cents).toBe(0);
    });

    it('rejects a scope target outside the company with 422', async () => {
      const c = await createCompany(t);
      const other = await createCompany(t);
      const foreignAgent = await insertAgent(t, other.id);
      const foreignProject = await insertProject(t, other.id);
      for (const body of [
        { scopeType: 'agent', scopeId: foreignAgent.id, amount: 1 },
        { scopeType: 'project', scopeId: foreignProject.id, amount: 1 },
        { scopeType: 'company', scopeId: other.id, amount: 1 },
        { scopeType: 'agent', amount: 1 },
      ]) {
        const res = await upsertPolicy(c.id, body).expect(422);
        expect(res.body.code).toBe('invalid_scope');
      }
    });

    it('validates fields (400) and refuses agents (403)', async () => {
      const c = await createCompany(t);
      for (const body of [
        { scopeType: 'team', amount: 1 },
        { scopeType: 'company' },
        { scopeType: 'company', amount: -1 },
        { scopeType: 'company', amount: 1, metric: 'dollars' },
        { scopeType: 'company', amount: 1, windowKind: 'weekly' },
        { scopeType: 'company', amount: 1, warnPercent: 0 },
        { scopeType: 'company', amount: 1, warnPercent: 101 },
        { scopeType: 'company', amount: 1, hardStopEnabled: 'yes' },
      ]) {
        await upsertPolicy(c.id, body).expect(400);
      }
      const a = await insertAgent(t, c.id);
      const token = await insertAgentKey(t, a);
      await upsertPolicy(c.id, { scopeType: 'company', amount: 1 }).set(bearer(token)).expect(403);
    });
  });

  describe('GET /api/companies/:companyId/budgets/overview', () => {
    it('shows policies with observed spend, active incidents, paused counts and pending approvals', async () => {
      const c = await createCompany(t, { budgetMonthlyCents: 10_000 });
      const a = await insertAgent(t, c.id, { budgetMonthlyCents: 100 });
      await insertAgent(t, c.id, { status: 'paused' });
      const p = await insertProject(t, c.id);
      await t.dataSource.query(`UPDATE projects SET paused_at = now(), pause_reason = 'manual' WHERE id = $1`, [p.id]);
      await reportCost(t, c.id, a.id, 100).expect(201);
      const o = await budgetOverview(t, c.id);
      expect(o).toMatchObject({
        companyId: c.id,
        budgetMonthlyCents: 10_000,
        spentMonthlyCents: 100,
        pausedAgentCount: 2,
        pausedProjectCount: 1,
        pendingApprovalCount: 0,
      });
      const agentPolicy = o.policies.find((x: { scopeType: string }) => x.scopeType === 'agent');
      expect(agentPolicy).toMatchObject({ observedAmount: 100, remainingAmount: 0, utilizationPercent: 100, state: 'exceeded' });
      const companyPolicy = o.policies.find((x: { scopeType: string }) => x.scopeType === 'company');
      expect(companyPolicy).toMatchObject({ observedAmount: 100, utilizationPercent: 1, state: 'ok' });
      expect(o.activeIncidents.map((i: Incident) => i.kind).sort()).toEqual(['hard', 'soft']);
    });

    it('counts pending hire approvals', async () => {
      const c = await createCompany(t, { requireBoardApprovalForNewAgents: true });
      const hire = () =>
        t.http
          .post(`/api/companies/${c.id}/agent-hires`)
          .send({
            name: `H-${Math.random().toString(36).slice(2, 8)}`,
            role: 'general',
            adapterType: 'process',
            adapterConfig: { command: 'true' },
          })
          .expect(201);
      await hire();
      const second = (await hire()).body;
      expect((await budgetOverview(t, c.id)).pendingApprovalCount).toBe(2);
      await t.http.post(`/api/approvals/${second.approval.id}/approve`).send({}).expect(200);
      expect((await budgetOverview(t, c.id)).pendingApprovalCount).toBe(1);
    });

    it('is readable by agents of the company, not of another company', async () => {
      const c = await createCompany(t);
      const a = await insertAgent(t, c.id);
      const token = await insertAgentKey(t, a);
      await t.http.get(`/api/companies/${c.id}/budgets/overview`).set(bearer(token)).expect(200);
      const other = await createCompany(t);
      await t.http.get(`/api/companies/${other.id}/budgets/overview`).set(bearer(token)).expect(403);
    });
  });

  describe('enforcement', () => {
    it('reaching warnPercent opens one soft incident per window without pausing', async () => {
      const c = await createCompany(t);
      const a = await insertAgent(t, c.id, { budgetMonthlyCents: 1000 });
      await reportCost(t, c.id, a.id, 799).expect(201);
      expect(await incidents(c.id)).toHaveLength(0);
      await reportCost(t, c.id, a.id, 1).expect(201);
      await reportCost(t, c.id, a.id, 50).expect(201);
      const soft = await incidents(c.id, 'soft');
      expect(soft).toHaveLength(1);
      expect(soft[0]).toMatchObject({
        scopeType: 'agent',
        scopeId: a.id,
        status: 'open',
        holdActive: false,
        thresholdAmount: 800,
        budgetAmount: 1000,
      });
      expect(await incidents(c.id, 'hard')).toHaveLength(0);
      expect((await agentRow(t, a.id)).status).toBe('idle');
      const [activity] = await t.dataSource.query(`SELECT action FROM activity_log WHERE entity_id = $1`, [soft[0].id]);
      expect(activity.action).toBe('budget.warning');
    });

    it('opens no soft incident when notifications are disabled', async () => {
      const c = await createCompany(t);
      const a = await insertAgent(t, c.id);
      await upsertPolicy(c.id, { scopeType: 'agent', scopeId: a.id, amount: 100, notifyEnabled: false }).expect(201);
      await reportCost(t, c.id, a.id, 90).expect(201);
      expect(await incidents(c.id)).toHaveLength(0);
    });

    it('reaching 100 percent opens a hard incident, pauses the agent with reason budget and cancels its work', async () => {
      const c = await createCompany(t);
      const a = await insertAgent(t, c.id, { budgetMonthlyCents: 1000 });
      const peer = await insertAgent(t, c.id);
      const queued = await insertWakeup(t, a);
      const peerWakeup = await insertWakeup(t, peer);
      await reportCost(t, c.id, a.id, 1000).expect(201);
      const hard = await incidents(c.id, 'hard');
      expect(hard).toHaveLength(1);
      expect(hard[0]).toMatchObject({ scopeType: 'agent', scopeId: a.id, holdActive: true, status: 'open', observedAmount: 1000 });
      expect(await agentRow(t, a.id)).toMatchObject({ status: 'paused', pause_reason: 'budget' });
      expect((await agentRow(t, peer.id)).status).toBe('idle');
      const rows = await t.dataSource.query(`SELECT id, status, skip_reason FROM agent_wakeup_requests WHERE id = ANY($1)`, [
        [queued.id, peerWakeup.id],
      ]);
      expect(rows.find((r: { id: string }) => r.id === queued.id)).toMatchObject({ status: 'cancelled', skip_reason: 'budget' });
      expect(rows.find((r: { id: string }) => r.id === peerWakeup.id)).toMatchObject({ status: 'queued', skip_reason: null });
      expect(cancellations).toEqual([{ scope: { companyId: c.id, agentIds: [a.id] }, reason: 'budget' }]);
      const [activity] = await t.dataSource.query(`SELECT action FROM activity_log WHERE entity_id = $1`, [hard[0].id]);
      expect(activity.action).toBe('budget.hard_stop');
      expect(await gate().checkBeforeRun(c.id, a.id)).toMatchObject({ allowed: false, reason: 'budget' });
      expect(await gate().checkBeforeRun(c.id, peer.id)).toEqual({ allowed: true });
    });

    it('a hard stop kills a running sleep process of the agent (through the WorkCancellation seam)', async () => {
      const c = await createCompany(t);
      const a = await insertAgent(t, c.id, { budgetMonthlyCents: 100, status: 'running' });
      const child = spawn('sleep', ['60'], { stdio: 'ignore' });
      const exited = new Promise<number>((resolve) => child.once('exit', () => resolve(Date.now())));
      // what the heartbeat engine registers: kill the scope's processes once the stop has committed
      const db = t.app.get(Db);
      t.app.get(WorkCancellation).register(async (scope) => {
        if (scope.companyId === c.id && (!scope.agentIds || scope.agentIds.includes(a.id))) db.afterCommit(() => child.kill('SIGTERM'));
      });
      await reportCost(t, c.id, a.id, 100).expect(201);
      // the process sleeps a minute: its end within the wait is the stop's doing (the bound is when to give up, on a loaded machine too)
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<number>((resolve) => (timer = setTimeout(() => resolve(-1), 30_000)));
      const at = await Promise.race([exited, timeout]);
      clearTimeout(timer);
      if (at === -1) child.kill('SIGKILL');
      expect(at).not.toBe(-1);
    });

    it('does not hard stop when hardStopEnabled is false', async () => {
      const c = await createCompany(t);
      const a = await insertAgent(t, c.id);
      await upsertPolicy(c.id, { scopeType: 'agent', scopeId: a.id, amount: 100, hardStopEnabled: false }).expect(201);
      await reportCost(t, c.id, a.id, 500).expect(201);
      expect(await incidents(c.id, 'hard')).toHaveLength(0);
      expect((await agentRow(t, a.id)).status).toBe('idle');
      expect(await gate().checkBeforeRun(c.id, a.id)).toEqual({ allowed: true });
    });

    it('keeps the reason of an agent paused for another reason', async () => {
      const c = await createCompany(t);
      const a = await insertAgent(t, c.id, { budgetMonthlyCents: 10 });
      await t.dataSource.query(`UPDATE agents SET status = 'paused', pause_reason = 'manual' WHERE id = $1`, [a.id]);
      await reportCost(t, c.id, a.id, 10).expect(201);
      expect(await agentRow(t, a.id)).toMatchObject({ status: 'paused', pause_reason: 'manual' });
      expect(await incidents(c.id, 'hard')).toHaveLength(1);
    });

    it('a company hard stop pauses the company and its agents and cancels all its work', async () => {
      const c = await createCompany(t, { budgetMonthlyCents: 100 });
      const a = await insertAgent(t, c.id);
      const b = await insertAgent(t, c.id, { status: 'running' });
      const gone = await insertAgent(t, c.id, { status: 'terminated' });
      const w = await insertWakeup(t, b);
      await reportCost(t, c.id, a.id, 60).expect(201);
      await reportCost(t, c.id, b.id, 40).expect(201);
      expect(await companyRow(t, c.id)).toMatchObject({ status: 'paused', pause_reason: 'budget', spent_monthly_cents: 100 });
      expect(await agentRow(t, a.id)).toMatchObject({ status: 'paused', pause_reason: 'budget' });
      expect(await agentRow(t, b.id)).toMatchObject({ status: 'paused', pause_reason: 'budget' });
      expect((await agentRow(t, gone.id)).status).toBe('terminated');
      const [wake] = await t.dataSource.query(`SELECT status, skip_reason FROM agent_wakeup_requests WHERE id = $1`, [w.id]);
      expect(wake).toEqual({ status: 'cancelled', skip_reason: 'budget' });
      expect(cancellations).toEqual([{ scope: { companyId: c.id }, reason: 'budget' }]);
      expect(await gate().checkBeforeRun(c.id, a.id)).toMatchObject({ allowed: false, reason: 'budget' });
      // cost reports are still accepted while paused: the money was spent
      await reportCost(t, c.id, a.id, 5).expect(201);
      expect(await incidents(c.id, 'hard')).toHaveLength(1);
    });

    it('a project budget (lifetime) pauses the project and cancels its wakeups only', async () => {
      const c = await createCompany(t);
      const a = await insertAgent(t, c.id);
      const p = await insertProject(t, c.id);
      await upsertPolicy(c.id, { scopeType: 'project', scopeId: p.id, amount: 200 }).expect(201);
      const inProject = await insertWakeup(t, a, { projectId: p.id });
      const elsewhere = await insertWakeup(t, a);
      await reportCost(t, c.id, a.id, 150, { projectId: p.id, occurredAt: '2025-01-01T00:00:00.000Z' }).expect(201);
      await reportCost(t, c.id, a.id, 1000).expect(201); // not attributed to the project
      await reportCost(t, c.id, a.id, 50, { projectId: p.id }).expect(201);
      const [proj] = await t.dataSource.query(`SELECT paused_at, pause_reason FROM projects WHERE id = $1`, [p.id]);
      expect(proj.pause_reason).toBe('budget');
      expect(proj.paused_at).not.toBeNull();
      expect((await agentRow(t, a.id)).status).toBe('idle');
      const rows = await t.dataSource.query(`SELECT id, status FROM agent_wakeup_requests WHERE agent_id = $1`, [a.id]);
      expect(rows.find((r: { id: string }) => r.id === inProject.id).status).toBe('cancelled');
      expect(rows.find((r: { id: string }) => r.id === elsewhere.id).status).toBe('queued');
      expect(cancellations).toEqual([{ scope: { companyId: c.id, projectId: p.id }, reason: 'budget' }]);
      expect((await gate().checkBeforeRun(c.id, a.id, p.id)).allowed).toBe(false);
      expect((await gate().checkBeforeRun(c.id, a.id)).allowed).toBe(true);
      expect((await budgetOverview(t, c.id)).pausedProjectCount).toBe(1);
    });

    it('50 concurrent cost events around the threshold open exactly one hard and one soft incident', async () => {
      const c = await createCompany(t);
      const a = await insertAgent(t, c.id, { budgetMonthlyCents: 1000 });
      const results = await Promise.all(Array.from({ length: 50 }, () => reportCost(t, c.id, a.id, 25)));
      expect(results.every((r) => r.status === 201)).toBe(true);
      const rows = await t.dataSource.query(`SELECT kind, observed_amount FROM budget_incidents WHERE company_id = $1 ORDER BY kind`, [
        c.id,
      ]);
      expect(rows.map((r: { kind: string }) => r.kind)).toEqual(['hard', 'soft']);
      expect(Number(rows[0].observed_amount)).toBe(1000); // the event that reached 100 percent, not a later one
      expect(await agentRow(t, a.id)).toMatchObject({ status: 'paused', pause_reason: 'budget', spent_monthly_cents: 1250 });
      expect((await companyRow(t, c.id)).spent_monthly_cents).toBe(1250);
      expect(cancellations).toHaveLength(1);
    });

    it('a limit reached by a committed event whose enforcement never ran is enforced by the budget sweep, once', async () => {
      const c = await createCompany(t);
      const a = await insertAgent(t, c.id, { budgetMonthlyCents: 1000 });
      await reportCost(t, c.id, a.id, 100).expect(201);
      // what a process stopped between an event's commit and its enforcement leaves: a total over the limit, no incident
      await t.dataSource.query(`UPDATE cost_usage SET billed_cents = 1200 WHERE scope_type = 'agent' AND scope_id = $1`, [a.id]);
      expect(await incidents(c.id)).toHaveLength(0);
      const sweep = () => t.app.get(BudgetsScheduler).enforceOverdue();
      await Promise.all([sweep(), sweep()]);
      const rows = await t.dataSource.query(`SELECT kind, observed_amount FROM budget_incidents WHERE company_id = $1 ORDER BY kind`, [
        c.id,
      ]);
      expect(rows.map((r: { kind: string; observed_amount: string }) => [r.kind, Number(r.observed_amount)])).toEqual([
        ['hard', 1200],
        ['soft', 1200],
      ]);
      expect(await agentRow(t, a.id)).toMatchObject({ status: 'paused', pause_reason: 'budget' });
      expect(cancellations.filter((x) => x.scope.companyId === c.id)).toHaveLength(1);
      // nothing is left to sweep for this company
      const [{ n }] = await t.dataSource.query(`SELECT count(*)::int AS n FROM budget_incidents WHERE company_id = $1`, [c.id]);
      await sweep();
      expect((await t.dataSource.query(`SELECT count(*)::int AS n FROM budget_incidents WHERE company_id = $1`, [c.id]))[0].n).toBe(n);
    });

    it('the sweep works beside a company at the maximum budget (no int4 overflow) and enforces a lowered budget', async () => {
      const rich = await createCompany(t);
      await t.http.patch(`/api/companies/${rich.id}/budgets`).send({ budgetMonthlyCents: 2_147_483_647 }).expect(200);
      const richAgent = await insertAgent(t, rich.id, { budgetMonthlyCents: 2_147_483_647 });
      await reportCost(t, rich.id, richAgent.id, 100).expect(201);
      const c = await createCompany(t);
      const a = await insertAgent(t, c.id, { budgetMonthlyCents: 100_000 });
      await reportCost(t, c.id, a.id, 500).expect(201);
      // lowered below the spend: only the sweep (or the next event) enforces it
      await t.http.patch(`/api/agents/${a.id}/budgets`).send({ budgetMonthlyCents: 400 }).expect(200);
      await t.app.get(BudgetsScheduler).enforceOverdue();
      expect(await agentRow(t, a.id)).toMatchObject({ status: 'paused', pause_reason: 'budget' });
      expect((await agentRow(t, richAgent.id)).status).not.toBe('paused');
    });

    it('a hard stop records the wakes of the runs it cancelled as cancelled with reason budget, not completed', async () => {
      const c = await createCompany(t);
      const a = await insertAgent(t, c.id, { budgetMonthlyCents: 1000 });
      const wake = await insertWakeup(t, a);
      const run = await insertRun(t, a, 'queued');
      await t.dataSource.query(`UPDATE agent_wakeup_requests SET status = 'claimed', run_id = $2 WHERE id = $1`, [wake.id, run.id]);
      await t.dataSource.query(`UPDATE heartbeat_runs SET wakeup_request_id = $2 WHERE id = $1`, [run.id, wake.id]);
      await reportCost(t, c.id, a.id, 1000).expect(201);
      const [row] = await t.dataSource.query(`SELECT status, skip_reason FROM agent_wakeup_requests WHERE id = $1`, [wake.id]);
      expect(row).toEqual({ status: 'cancelled', skip_reason: 'budget' });
      const [r] = await t.dataSource.query(`SELECT status FROM heartbeat_runs WHERE id = $1`, [run.id]);
      expect(r.status).toBe('cancelled');
    });

    it('one company whose enforcement fails does not stop the sweep for the others', async () => {
      const broken = await createCompany(t);
      const ba = await insertAgent(t, broken.id, { budgetMonthlyCents: 100_000 });
      const c = await createCompany(t);
      const a = await insertAgent(t, c.id, { budgetMonthlyCents: 100_000 });
      for (const [co, ag] of [
        [broken.id, ba.id],
        [c.id, a.id],
      ]) {
        await reportCost(t, co, ag, 500).expect(201);
        await t.http.patch(`/api/agents/${ag}/budgets`).send({ budgetMonthlyCents: 400 }).expect(200);
      }
      await t.dataSource.query(`
        CREATE FUNCTION test_fail_incident() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
          IF NEW.company_id = '${broken.id}' THEN RAISE EXCEPTION 'incident refused'; END IF;
          RETURN NEW;
        END $$;
        CREATE TRIGGER test_fail_incident BEFORE INSERT ON budget_incidents FOR EACH ROW EXECUTE FUNCTION test_fail_incident();`);
      try {
        await t.app.get(BudgetsScheduler).enforceOverdue();
      } finally {
        await t.dataSource.query(`DROP TRIGGER test_fail_incident ON budget_incidents; DROP FUNCTION test_fail_incident();`);
      }
      expect((await agentRow(t, ba.id)).status).not.toBe('paused');
      expect(await agentRow(t, a.id)).toMatchObject({ status: 'paused', pause_reason: 'budget' });
    });

    it('budgets tokens: a total_tokens policy stops zero-cent subscription usage', async () => {
      const c = await createCompany(t);
      const a = await insertAgent(t, c.id);
      await upsertPolicy(c.id, { scopeType: 'agent', scopeId: a.id, metric: 'total_tokens', amount: 10_000 }).expect(201);
      await reportCost(t, c.id, a.id, 0, { billingType: 'subscription_included', inputTokens: 6000, cachedInputTokens: 1000 }).expect(201);
      expect(await incidents(c.id, 'hard')).toHaveLength(0);
      await reportCost(t, c.id, a.id, 0, { billingType: 'subscription_included', outputTokens: 3000 }).expect(201);
      const [hard] = await incidents(c.id, 'hard');
      expect(hard).toMatchObject({ scopeId: a.id, observedAmount: 10_000 });
      expect((await agentRow(t, a.id)).status).toBe('paused');
    });

    it('budgets runs: the gate refuses a run once a run_count policy is used up', async () => {
      const c = await createCompany(t);
      const a = await insertAgent(t, c.id);
      await upsertPolicy(c.id, { scopeType: 'agent', scopeId: a.id, metric: 'run_count', amount: 2 }).expect(201);
      await insertRun(t, a, 'succeeded');
      expect(await gate().checkBeforeRun(c.id, a.id)).toEqual({ allowed: true });
      await insertRun(t, a, 'succeeded');
      expect(await gate().checkBeforeRun(c.id, a.id)).toMatchObject({ allowed: false, reason: 'budget' });
      const policy = (await budgetOverview(t, c.id)).policies[0];
      expect(policy).toMatchObject({ metric: 'run_count', observedAmount: 2, state: 'exceeded' });
    });

    it('the gate refuses a scope over its hard limit even without an incident (budget lowered)', async () => {
      const c = await createCompany(t);
      const a = await insertAgent(t, c.id, { budgetMonthlyCents: 1000 });
      await reportCost(t, c.id, a.id, 500).expect(201);
      expect((await gate().checkBeforeRun(c.id, a.id)).allowed).toBe(true);
      await t.http.patch(`/api/agents/${a.id}/budgets`).send({ budgetMonthlyCents: 400 }).expect(200);
      expect(await gate().checkBeforeRun(c.id, a.id)).toMatchObject({ allowed: false, reason: 'budget' });
    });
  });

  describe('POST /api/companies/:companyId/budget-incidents/:incidentId/resolve', () => {
    const resolveUrl = (companyId: string, id: string) => `/api/companies/${companyId}/budget-incidents/${id}/resolve`;

    async function hardStoppedAgent(spend: number) {
      const c = await createCompany(t);
      const a = await insertAgent(t, c.id, { budgetMonthlyCents: 1000 });
      await reportCost(t, c.id, a.id, spend).expect(201);
      const [incident] = await incidents(c.id, 'hard');
      return { c, a, incident };
    }

    it('raise_budget_and_resume must exceed observed spend (422), then resumes the agent with the new budget', async () => {
      const { c, a, incident } = await hardStoppedAgent(1200);
      for (const amount of [1100, 1200]) {
        const res = await t.http.post(resolveUrl(c.id, incident.id)).send({ action: 'raise_budget_and_resume', amount }).expect(422);
        expect(res.body).toMatchObject({ code: 'budget_not_above_spend', observedAmount: 1200 });
      }
      expect((await agentRow(t, a.id)).status).toBe('paused');
      const res = await t.http.post(resolveUrl(c.id, incident.id)).send({ action: 'raise_budget_and_resume', amount: 5000 }).expect(200);
      expect(res.body).toMatchObject({
        id: incident.id,
        status: 'resolved',
        resolution: 'raise_budget_and_resume',
        holdActive: false,
        resumed: true,
      });
      expect(await agentRow(t, a.id)).toMatchObject({ status: 'idle', pause_reason: null, budget_monthly_cents: 5000 });
      expect(await gate().checkBeforeRun(c.id, a.id)).toEqual({ allowed: true });
      const o = await budgetOverview(t, c.id);
      expect(o.activeIncidents).toHaveLength(0); // the soft incident of the old amount is resolved too
      expect(o.policies[0]).toMatchObject({ amount: 5000, observedAmount: 1200 });
      await t.http.post(resolveUrl(c.id, incident.id)).send({ action: 'keep_paused' }).expect(409);
      const [activity] = await t.dataSource.query(
        `SELECT action FROM activity_log WHERE entity_id = $1 AND action = 'budget.incident_resolved'`,
        [incident.id],
      );
      expect(activity).toBeDefined();
    });

    it('after a raise, crossing the new amount opens a new hard incident', async () => {
      const { c, a, incident } = await hardStoppedAgent(1000);
      await t.http.post(resolveUrl(c.id, incident.id)).send({ action: 'raise_budget_and_resume', amount: 1500 }).expect(200);
      await reportCost(t, c.id, a.id, 500).expect(201);
      const hard = await incidents(c.id, 'hard');
      expect(hard).toHaveLength(1);
      expect(hard[0].id).not.toBe(incident.id);
      expect((await agentRow(t, a.id)).status).toBe('paused');
    });

    it('keep_paused resolves the incident but keeps the hold', async () => {
      const { c, a, incident } = await hardStoppedAgent(1500);
      const res = await t.http.post(resolveUrl(c.id, incident.id)).send({ action: 'keep_paused' }).expect(200);
      expect(res.body).toMatchObject({ status: 'resolved', resolution: 'keep_paused', holdActive: true, resumed: false });
      expect(await agentRow(t, a.id)).toMatchObject({ status: 'paused', pause_reason: 'budget' });
      expect((await gate().checkBeforeRun(c.id, a.id)).allowed).toBe(false);
      // still listed while it holds the agent
      expect((await incidents(c.id, 'hard')).map((i) => i.id)).toEqual([incident.id]);
    });

    it('raising a company budget resumes the company and the agents it paused, not an agent held by its own budget', async () => {
      const c = await createCompany(t, { budgetMonthlyCents: 100 });
      const a = await insertAgent(t, c.id, { budgetMonthlyCents: 50 });
      const b = await insertAgent(t, c.id);
      await reportCost(t, c.id, a.id, 60).expect(201);
      await reportCost(t, c.id, b.id, 40).expect(201);
      const companyIncident = (await incidents(c.id, 'hard')).find((i) => i.scopeType === 'company')!;
      const res = await t.http
        .post(resolveUrl(c.id, companyIncident.id))
        .send({ action: 'raise_budget_and_resume', amount: 1000 })
        .expect(200);
      expect(res.body.resumed).toBe(true);
      expect(await companyRow(t, c.id)).toMatchObject({ status: 'active', pause_reason: null, budget_monthly_cents: 1000 });
      expect((await agentRow(t, b.id)).status).toBe('idle');
      expect(await agentRow(t, a.id)).toMatchObject({ status: 'paused', pause_reason: 'budget' });
    });

    it('an agent whose company still holds stays paused after its own raise (resumed false)', async () => {
      const c = await createCompany(t, { budgetMonthlyCents: 100 });
      const a = await insertAgent(t, c.id, { budgetMonthlyCents: 100 });
      await reportCost(t, c.id, a.id, 100).expect(201);
      const hard = await incidents(c.id, 'hard');
      const agentIncident = hard.find((i) => i.scopeType === 'agent')!;
      const companyIncident = hard.find((i) => i.scopeType === 'company')!;
      const first = await t.http
        .post(resolveUrl(c.id, agentIncident.id))
        .send({ action: 'raise_budget_and_resume', amount: 500 })
        .expect(200);
      expect(first.body.resumed).toBe(false);
      expect((await agentRow(t, a.id)).status).toBe('paused');
      const second = await t.http
        .post(resolveUrl(c.id, companyIncident.id))
        .send({ action: 'raise_budget_and_resume', amount: 500 })
        .expect(200);
      expect(second.body.resumed).toBe(true);
      expect(await agentRow(t, a.id)).toMatchObject({ status: 'idle', pause_reason: null });
      expect((await companyRow(t, c.id)).status).toBe('active');
    });

    it('validates the action and amount (400), unknown or foreign incidents (404), agent callers (403)', async () => {
      const { c, a, incident } = await hardStoppedAgent(1000);
      await t.http.post(resolveUrl(c.id, incident.id)).send({ action: 'forgive' }).expect(400);
      await t.http.post(resolveUrl(c.id, incident.id)).send({ action: 'raise_budget_and_resume' }).expect(400);
      await t.http.post(resolveUrl(c.id, incident.id)).send({ action: 'raise_budget_and_resume', amount: 'lots' }).expect(400);
      await t.http.post(resolveUrl(c.id, unknownId())).send({ action: 'keep_paused' }).expect(404);
      await t.http.post(resolveUrl(c.id, 'x')).send({ action: 'keep_paused' }).expect(404);
      const other = await createCompany(t);
      await t.http.post(resolveUrl(other.id, incident.id)).send({ action: 'keep_paused' }).expect(404);
      const token = await insertAgentKey(t, a);
      await t.http.post(resolveUrl(c.id, incident.id)).set(bearer(token)).send({ action: 'keep_paused' }).expect(403);
    });
  });

  describe('GET /api/companies/:companyId/budget-incidents', () => {
    it('lists incidents newest first with a status filter', async () => {
      const c = await createCompany(t);
      const a = await insertAgent(t, c.id, { budgetMonthlyCents: 100 });
      await reportCost(t, c.id, a.id, 100).expect(201);
      const all = await t.http.get(`/api/companies/${c.id}/budget-incidents`).expect(200);
      expect(all.body).toHaveLength(2);
      const hard = all.body.find((i: Incident) => i.kind === 'hard');
      await t.http.post(`/api/companies/${c.id}/budget-incidents/${hard.id}/resolve`).send({ action: 'keep_paused' }).expect(200);
      expect((await t.http.get(`/api/companies/${c.id}/budget-incidents?status=open`).expect(200)).body).toHaveLength(1);
      expect((await t.http.get(`/api/companies/${c.id}/budget-incidents?status=resolved`).expect(200)).body).toHaveLength(1);
      expect((await t.http.get(`/api/companies/${c.id}/budget-incidents?status=active`).expect(200)).body).toHaveLength(2);
      await t.http.get(`/api/companies/${c.id}/budget-incidents?status=closed`).expect(400);
    });
  });
});
