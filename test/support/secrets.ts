import { randomUUID } from 'node:crypto';
import { uniq } from './factories';
import { sqlAgent, sqlAgentKey, sqlFinishRun, sqlRun } from './sql';
import type { TestApp } from './test-app';

export interface SqlAgent {
  id: string;
  companyId: string;
  token: string;
}

/** An agent row and an API key by direct SQL. */
export async function insertAgent(
  t: TestApp,
  companyId: string,
  opts: { adapterConfig?: Record<string, unknown>; metadata?: Record<string, unknown>; role?: string; status?: string } = {},
): Promise<SqlAgent> {
  const { id } = await sqlAgent(t, companyId, opts);
  return { id, companyId, token: await sqlAgentKey(t, companyId, id) };
}

/** Replaces the agent's adapterConfig.env (what the agents module stores after validateEnvBindings). */
export async function setAgentEnv(t: TestApp, agentId: string, env: Record<string, unknown>): Promise<void> {
  await t.dataSource.query(`UPDATE agents SET adapter_config = adapter_config || jsonb_build_object('env', $2::jsonb) WHERE id = $1`, [
    agentId,
    JSON.stringify(env),
  ]);
}

/** A live (running) heartbeat run of the agent; `context` becomes its context snapshot. */
export const startRun = (
  t: TestApp,
  agent: SqlAgent,
  opts: { context?: Record<string, unknown>; invocationSource?: string } = {},
): Promise<string> => sqlRun(t, agent.companyId, agent.id, opts);

export const finishRun = sqlFinishRun;

export interface CreatedSecret {
  id: string;
  name: string;
  plaintext: string;
  latestVersion: number;
  [k: string]: unknown;
}

/** A secret through the board API; the plaintext is returned for assertions only. */
export async function createSecret(t: TestApp, companyId: string, extra: Record<string, unknown> = {}): Promise<CreatedSecret> {
  const body = { name: uniq('SECRET').toUpperCase().replace(/-/g, '_'), value: `plain-${randomUUID()}`, ...extra };
  const res = await t.http.post(`/api/companies/${companyId}/secrets`).send(body);
  if (res.status !== 201) throw new Error(`createSecret: ${res.status} ${JSON.stringify(res.body)}`);
  return { ...res.body, plaintext: body.value as string };
}

export const secretRef = (secretId: string, version?: 'latest' | number, extra: Record<string, unknown> = {}) => ({
  type: 'secret_ref',
  secretId,
  ...(version === undefined ? {} : { version }),
  ...extra,
});

/** Headers of a run-bound call: the agent's API key plus the run header. */
export const runHeaders = (agent: SqlAgent, runId?: string): Record<string, string> => ({
  Authorization: `Bearer ${agent.token}`,
  ...(runId ? { 'X-Service-Run-Id': runId } : {}),
});

/**
 * Every text, json(b), bytea and character column of every table, as one dump-like text per row,
 * so a test can grep the whole database for a plaintext (bytea rendered as text and hex).
 */
export async function dumpDatabase(t: TestApp): Promise<string> {
  const cols: Array<{ table_name: string; column_name: string; data_type: string }> = await t.dataSource.query(
    `SELECT table_name, column_name, data_type FROM information_schema.columns
      WHERE table_schema = 'public' AND data_type IN ('text','jsonb','json','bytea','character varying','character','ARRAY')`,
  );
  const parts: string[] = [];
  for (const c of cols) {
    const col = `"${c.column_name}"`;
    const expr = c.data_type === 'bytea' ? `encode(${col}, 'escape') || ' ' || encode(${col}, 'hex')` : `${col}::text`;
    const rows: Array<{ v: string | null }> = await t.dataSource.query(
      `SELECT ${expr} AS v FROM "${c.table_name}" WHERE ${col} IS NOT NULL`,
    );
    for (const r of rows) if (r.v) parts.push(`${c.table_name}.${c.column_name}: ${r.v}`);
  }
  return parts.join('\n');
}
