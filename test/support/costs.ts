import { randomUUID } from 'node:crypto';
import { BudgetSyncService } from '../../src/modules/budgets/budget-sync.service';
import { uniq } from './factories';
import { sqlAgent, sqlAgentKey, sqlRun } from './sql';
import type { TestApp } from './test-app';

export interface SqlAgent {
  id: string;
  companyId: string;
  name: string;
}

/** An agent row inserted directly; a budget syncs its policy. */
export async function insertAgent(
  t: TestApp,
  companyId: string,
  extra: { budgetMonthlyCents?: number; status?: string; name?: string } = {},
): Promise<SqlAgent> {
  const agent = await sqlAgent(t, companyId, extra);
  if (extra.budgetMonthlyCents)
    await t.app.get(BudgetSyncService).syncMonthlyPolicy(companyId, 'agent', agent.id, extra.budgetMonthlyCents);
  return agent;
}

/** An API key row for an agent; returns the bearer token. */
export const insertAgentKey = (t: TestApp, agent: SqlAgent): Promise<string> => sqlAgentKey(t, agent.companyId, agent.id);

export async function insertProject(t: TestApp, companyId: string): Promise<{ id: string }> {
  const name = uniq('Proj');
  const [row] = await t.dataSource.query(`INSERT INTO projects (company_id, name, url_key) VALUES ($1, $2, $3) RETURNING id`, [
    companyId,
    name,
    name.toLowerCase(),
  ]);
  return row;
}

/** A heartbeat run row of an agent (status running unless given). */
export async function insertRun(t: TestApp, agent: SqlAgent, status = 'running', createdAt?: Date): Promise<{ id: string }> {
  return { id: await sqlRun(t, agent.companyId, agent.id, { status, createdAt }) };
}

/** A queued wakeup row of an agent, optionally naming a project in its payload. */
export async function insertWakeup(t: TestApp, agent: SqlAgent, payload: Record<string, unknown> = {}): Promise<{ id: string }> {
  const [row] = await t.dataSource.query(
    `INSERT INTO agent_wakeup_requests (company_id, agent_id, source, payload) VALUES ($1, $2, 'on_demand', $3) RETURNING id`,
    [agent.companyId, agent.id, payload],
  );
  return row;
}

export const costBody = (agentId: string, extra: Record<string, unknown> = {}) => ({
  agentId,
  provider: 'prov-x',
  model: 'model-x',
  costCents: 100,
  occurredAt: new Date().toISOString(),
  ...extra,
});

/** POST a cost event (board unless a token is given). */
export function reportCost(
  t: TestApp,
  companyId: string,
  agentId: string,
  costCents: number,
  extra: Record<string, unknown> = {},
  token?: string,
) {
  const req = t.http.post(`/api/companies/${companyId}/cost-events`).send(costBody(agentId, { costCents, ...extra }));
  if (token) req.set('Authorization', `Bearer ${token}`);
  return req;
}

export async function budgetOverview(t: TestApp, companyId: string) {
  const res = await t.http.get(`/api/companies/${companyId}/budgets/overview`).expect(200);
  return res.body;
}

export async function agentRow(
  t: TestApp,
  agentId: string,
): Promise<{ status: string; pause_reason: string | null; spent_monthly_cents: number; budget_monthly_cents: number }> {
  const [row] = await t.dataSource.query(
    `SELECT status, pause_reason, spent_monthly_cents, budget_monthly_cents FROM agents WHERE id = $1`,
    [agentId],
  );
  return row;
}

export async function companyRow(
  t: TestApp,
  companyId: string,
): Promise<{ status: string; pause_reason: string | null; spent_monthly_cents: number; budget_monthly_cents: number }> {
  const [row] = await t.dataSource.query(
    `SELECT status, pause_reason, spent_monthly_cents, budget_monthly_cents FROM companies WHERE id = $1`,
    [companyId],
  );
  return row;
}

export const unknownId = () => randomUUID();
