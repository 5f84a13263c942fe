import { generateToken, sha256Hex } from '../../src/common/auth/tokens';
import { bearer, uniq } from './factories';
import type { TestApp } from './test-app';

export interface SqlAgent {
  id: string;
  companyId: string;
  name: string;
  token: string;
}

/** An agent row and an API key for it, by direct SQL (the agents API is built elsewhere). */
export async function insertAgent(
  t: TestApp,
  companyId: string,
  extra: { name?: string; role?: string; status?: string; permissions?: Record<string, unknown> } = {},
): Promise<SqlAgent> {
  const name = extra.name ?? uniq('Agent');
  const [a] = await t.dataSource.query(
    `INSERT INTO agents (company_id, name, url_key, role, adapter_type, status, permissions)
     VALUES ($1, $2, $3, $4, 'process', $5, $6) RETURNING id`,
    [companyId, name, name.toLowerCase().replace(/[^a-z0-9]+/g, '-'), extra.role ?? 'general', extra.status ?? 'idle', extra.permissions ?? {}],
  );
  const token = generateToken('ak');
  await t.dataSource.query(
    `INSERT INTO agent_api_keys (company_id, agent_id, name, token_hash, token_prefix) VALUES ($1, $2, 'test', $3, $4)`,
    [companyId, a.id, sha256Hex(token), token.slice(0, 12)],
  );
  return { id: a.id, companyId, name, token };
}

/** A heartbeat run of the agent: `running` is live, `succeeded` (etc.) finished. */
export async function insertRun(t: TestApp, agent: SqlAgent, status = 'running', extra: { issueId?: string; context?: Record<string, unknown> } = {}): Promise<string> {
  const [r] = await t.dataSource.query(
    `INSERT INTO heartbeat_runs (company_id, agent_id, status, invocation_source, adapter_type, issue_id, context_snapshot, started_at)
     VALUES ($1, $2, $3, 'on_demand', 'process', $4, $5, now()) RETURNING id`,
    [agent.companyId, agent.id, status, extra.issueId ?? null, extra.context ?? {}],
  );
  return r.id;
}

export async function finishRun(t: TestApp, runId: string, status = 'succeeded'): Promise<void> {
  await t.dataSource.query(`UPDATE heartbeat_runs SET status = $2, finished_at = now() WHERE id = $1`, [runId, status]);
}

export async function insertGoal(t: TestApp, companyId: string, extra: { level?: string; title?: string; createdAt?: string } = {}): Promise<string> {
  const [g] = await t.dataSource.query(
    `INSERT INTO goals (company_id, title, level, created_at) VALUES ($1, $2, $3, coalesce($4::timestamptz, now())) RETURNING id`,
    [companyId, extra.title ?? uniq('Goal'), extra.level ?? 'task', extra.createdAt ?? null],
  );
  return g.id;
}

export async function insertProject(t: TestApp, companyId: string, extra: { goalId?: string; paused?: boolean; name?: string } = {}): Promise<string> {
  const name = extra.name ?? uniq('Proj');
  const [p] = await t.dataSource.query(
    `INSERT INTO projects (company_id, name, url_key, goal_id, paused_at) VALUES ($1, $2, $3, $4, $5) RETURNING id`,
    [companyId, name, name.toLowerCase(), extra.goalId ?? null, extra.paused ? new Date() : null],
  );
  return p.id;
}

export interface IssueRecord {
  id: string;
  identifier: string;
  companyId: string;
  status: string;
  assigneeAgentId: string | null;
  checkoutRunId: string | null;
  [k: string]: unknown;
}

/** An issue through the API (board caller unless a token is given). */
export async function createIssue(t: TestApp, companyId: string, body: Record<string, unknown> = {}, token?: string): Promise<IssueRecord> {
  const req = t.http.post(`/api/companies/${companyId}/issues`).send({ title: uniq('Issue'), ...body });
  if (token) req.set(bearer(token));
  const res = await req;
  if (res.status !== 201) throw new Error(`createIssue: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body as IssueRecord;
}

/** Headers of an agent call, optionally bound to a run. */
export const agentHeaders = (agent: SqlAgent, runId?: string): Record<string, string> => ({
  ...bearer(agent.token),
  ...(runId ? { 'X-Service-Run-Id': runId } : {}),
});

/** An agent with a live run that has checked out a fresh todo issue. */
export async function checkedOutIssue(t: TestApp, companyId: string): Promise<{ agent: SqlAgent; runId: string; issue: IssueRecord }> {
  const agent = await insertAgent(t, companyId);
  const runId = await insertRun(t, agent);
  const issue = await createIssue(t, companyId, { status: 'todo' });
  const res = await t.http.post(`/api/issues/${issue.id}/checkout`).set(agentHeaders(agent, runId)).send({ agentId: agent.id, expectedStatuses: ['todo'] });
  if (res.status !== 200) throw new Error(`checkout: ${res.status} ${JSON.stringify(res.body)}`);
  return { agent, runId, issue: res.body };
}

export async function wakeups(t: TestApp, agentId: string): Promise<Array<{ source: string; reason: string; trigger_detail: string | null; payload: Record<string, unknown>; issue_id: string | null }>> {
  return t.dataSource.query(`SELECT source, reason, trigger_detail, payload, issue_id FROM agent_wakeup_requests WHERE agent_id = $1 ORDER BY created_at`, [agentId]);
}

/** A company row by SQL (for apps in authenticated mode, where no board credential exists yet). */
export async function insertCompany(t: TestApp): Promise<{ id: string; issuePrefix: string }> {
  const prefix = `Q${Math.random().toString(36).slice(2, 8).toUpperCase().replace(/[^A-Z]/g, 'X')}`;
  const [c] = await t.dataSource.query(`INSERT INTO companies (name, issue_prefix) VALUES ($1, $2) RETURNING id`, [uniq('Co'), prefix]);
  return { id: c.id, issuePrefix: prefix };
}
