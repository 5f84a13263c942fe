import { bearer, uniq } from './factories';
import { sqlAgent, sqlAgentKey, sqlFinishRun, sqlRun } from './sql';
import type { TestApp } from './test-app';

export interface SqlAgent {
  id: string;
  companyId: string;
  name: string;
  token: string;
}

/** An agent row and an API key for it, by direct SQL. */
export async function insertAgent(
  t: TestApp,
  companyId: string,
  extra: { name?: string; role?: string; status?: string; permissions?: Record<string, unknown> } = {},
): Promise<SqlAgent> {
  const agent = await sqlAgent(t, companyId, extra);
  return { ...agent, token: await sqlAgentKey(t, companyId, agent.id) };
}

/** A heartbeat run of the agent: `running` is live, `succeeded` (etc.) finished. */
export const insertRun = (
  t: TestApp,
  agent: SqlAgent,
  status = 'running',
  extra: { issueId?: string; context?: Record<string, unknown> } = {},
): Promise<string> => sqlRun(t, agent.companyId, agent.id, { status, ...extra });

export const finishRun = sqlFinishRun;

export async function insertGoal(
  t: TestApp,
  companyId: string,
  extra: { level?: string; title?: string; createdAt?: string } = {},
): Promise<string> {
  const [g] = await t.dataSource.query(
    `INSERT INTO goals (company_id, title, level, created_at) VALUES ($1, $2, $3, coalesce($4::timestamptz, now())) RETURNING id`,
    [companyId, extra.title ?? uniq('Goal'), extra.level ?? 'task', extra.createdAt ?? null],
  );
  return g.id;
}

export async function insertProject(
  t: TestApp,
  companyId: string,
  extra: { goalId?: string; paused?: boolean; name?: string } = {},
): Promise<string> {
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
  const res = await t.http
    .post(`/api/issues/${issue.id}/checkout`)
    .set(agentHeaders(agent, runId))
    .send({ agentId: agent.id, expectedStatuses: ['todo'] });
  if (res.status !== 200) throw new Error(`checkout: ${res.status} ${JSON.stringify(res.body)}`);
  return { agent, runId, issue: res.body };
}

export async function wakeups(
  t: TestApp,
  agentId: string,
): Promise<
  Array<{ source: string; reason: string; trigger_detail: string | null; payload: Record<string, unknown>; issue_id: string | null }>
> {
  return t.dataSource.query(
    `SELECT source, reason, trigger_detail, payload, issue_id FROM agent_wakeup_requests WHERE agent_id = $1 ORDER BY created_at`,
    [agentId],
  );
}

/** A company row by SQL (for apps in authenticated mode, where no board credential exists yet). */
export async function insertCompany(t: TestApp): Promise<{ id: string; issuePrefix: string }> {
  const prefix = `Q${Math.random()
    .toString(36)
    .slice(2, 8)
    .toUpperCase()
    .replace(/[^A-Z]/g, 'X')}`;
  const [c] = await t.dataSource.query(`INSERT INTO companies (name, issue_prefix) VALUES ($1, $2) RETURNING id`, [uniq('Co'), prefix]);
  return { id: c.id, issuePrefix: prefix };
}
