import { randomUUID } from 'node:crypto';
import { generateToken, sha256Hex } from '../../src/common/auth/tokens';
import { uniq } from './factories';
import type { TestApp } from './test-app';

export interface SqlAgent {
  id: string;
  companyId: string;
  token: string;
}

/** An agent row and an API key by direct SQL (the agents API lives in another module). */
export async function insertAgent(
  t: TestApp,
  companyId: string,
  opts: { adapterConfig?: Record<string, unknown>; metadata?: Record<string, unknown>; role?: string; status?: string } = {},
): Promise<SqlAgent> {
  const id = randomUUID();
  const name = uniq('Agent');
  await t.dataSource.query(
    `INSERT INTO agents (id, company_id, name, url_key, role, adapter_type, adapter_config, metadata, status)
     VALUES ($1, $2, $3, $4, $5, 'process', $6, $7, $8)`,
    [id, companyId, name, name.toLowerCase(), opts.role ?? 'general', JSON.stringify(opts.adapterConfig ?? { command: 'true' }),
      JSON.stringify(opts.metadata ?? {}), opts.status ?? 'idle'],
  );
  const token = generateToken('ak');
  await t.dataSource.query(
    `INSERT INTO agent_api_keys (company_id, agent_id, name, token_hash, token_prefix) VALUES ($1, $2, 'test', $3, $4)`,
    [companyId, id, sha256Hex(token), token.slice(0, 12)],
  );
  return { id, companyId, token };
}

/** Replaces the agent's adapterConfig.env (what the agents module stores after validateEnvBindings). */
export async function setAgentEnv(t: TestApp, agentId: string, env: Record<string, unknown>): Promise<void> {
  await t.dataSource.query(`UPDATE agents SET adapter_config = adapter_config || jsonb_build_object('env', $2::jsonb) WHERE id = $1`, [agentId, JSON.stringify(env)]);
}

/** A live (running) heartbeat run of the agent; `context` becomes its context snapshot. */
export async function startRun(t: TestApp, agent: SqlAgent, opts: { context?: Record<string, unknown>; invocationSource?: string } = {}): Promise<string> {
  const [row] = await t.dataSource.query(
    `INSERT INTO heartbeat_runs (company_id, agent_id, status, invocation_source, adapter_type, context_snapshot, started_at)
     VALUES ($1, $2, 'running', $3, 'process', $4, now()) RETURNING id`,
    [agent.companyId, agent.id, opts.invocationSource ?? 'on_demand', JSON.stringify(opts.context ?? {})],
  );
  return row.id as string;
}

export async function finishRun(t: TestApp, runId: string, status = 'succeeded'): Promise<void> {
  await t.dataSource.query(`UPDATE heartbeat_runs SET status = $2, finished_at = now() WHERE id = $1`, [runId, status]);
}

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
    const rows: Array<{ v: string | null }> = await t.dataSource.query(`SELECT ${expr} AS v FROM "${c.table_name}" WHERE ${col} IS NOT NULL`);
    for (const r of rows) if (r.v) parts.push(`${c.table_name}.${c.column_name}: ${r.v}`);
  }
  return parts.join('\n');
}
