import { createCompany } from '../support/factories';
import { insertAgent, reportCost } from '../support/costs';
import { createTestApp, TestApp } from '../support/test-app';

describe('costs smoke', () => {
  let t: TestApp;
  beforeAll(async () => { t = await createTestApp(); });
  afterAll(() => t.close());
  it('works', async () => {
    const c = await createCompany(t, { budgetMonthlyCents: 1000 });
    const a = await insertAgent(t, c.id, { budgetMonthlyCents: 500 });
    const r = await reportCost(t, c.id, a.id, 450);
    console.log(r.status, r.body);
    const o = await t.http.get(`/api/companies/${c.id}/budgets/overview`);
    console.log(JSON.stringify(o.body, null, 1));
    for (const p of ['summary','by-agent','by-agent-model','by-provider','by-biller','by-project','window-spend','quota-windows']) {
      const x = await t.http.get(`/api/companies/${c.id}/costs/${p}`); console.log(p, x.status, JSON.stringify(x.body).slice(0, 400));
    }
    const r2 = await reportCost(t, c.id, a.id, 100);
    console.log(r2.status, JSON.stringify((await t.http.get(`/api/companies/${c.id}/budgets/overview`)).body.activeIncidents));
  });
});
