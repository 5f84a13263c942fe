import { generateToken, sha256Hex, tokenDisplayPrefix } from '../../src/common/auth/tokens';
import { uniq } from './factories';
import type { TestApp } from './test-app';

/**
 * Direct-SQL fixtures for rows a test needs in a precise state (an agent with an odd status, a run
 * that is live or finished) without going through the routes. Prefer the API factories otherwise.
 */
export interface AgentRowFields {
  name?: string;
  role?: string;
  status?: string;
  adapterType?: string;
  adapterConfig?: Record<string, unknown>;
  runtimeConfig?: Record<string, unknown>;
  permissions?: Record<string, unknown>;
  metadata?: Record<string, unknown>;
  budgetMonthlyCents?: number;
  spentMonthlyCents?: number;
}

export interface AgentRow {
  id: string;
  companyId: string;
  name: string;
}

export async function sqlAgent(t: TestApp, companyId: string, f: AgentRowFields = {}): Promise<AgentRow> {
  const name = f.name ?? uniq('Agent');
  const [row] = await t.dataSource.query(
    `INSERT INTO agents (company_id, name, url_key, role, adapter_type, adapter_config, runtime_config, permissions, metadata,
                         status, budget_monthly_cents, spent_monthly_cents)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12) RETURNING id`,
    [
      companyId,
      name,
      name.toLowerCase().replace(/[^a-z0-9]+/g, '-'),
      f.role ?? 'general',
      f.adapterType ?? 'process',
      JSON.stringify(f.adapterConfig ?? { command: 'true' }),
      JSON.stringify(f.runtimeConfig ?? { heartbeat: { enabled: false } }),
      JSON.stringify(f.permissions ?? {}),
      JSON.stringify(f.metadata ?? {}),
      f.status ?? 'idle',
      f.budgetMonthlyCents ?? 0,
      f.spentMonthlyCents ?? 0,
    ],
  );
  return { id: row.id, companyId, name };
}

/** An API key row for the agent; returns the bearer token. */
export async function sqlAgentKey(t: TestApp, companyId: string, agentId: string): Promise<string> {
  const token = generateToken('ak');
  await t.dataSource.query(
    `INSERT INTO agent_api_keys (company_id, agent_id, name, token_hash, token_prefix) VALUES ($1, $2, 'test', $3, $4)`,
    [companyId, agentId, sha256Hex(token), tokenDisplayPrefix(token)],
  );
  return token;
}

export interface RunRowFields {
  status?: string;
  issueId?: string | null;
  context?: Record<string, unknown>;
  invocationSource?: string;
  createdAt?: Date | null;
}

/** A heartbeat run row: `running` (default) is live for the guard; `succeeded` and the rest are finished. */
export async function sqlRun(t: TestApp, companyId: string, agentId: string, f: RunRowFields = {}): Promise<string> {
  const [row] = await t.dataSource.query(
    `INSERT INTO heartbeat_runs (company_id, agent_id, status, invocation_source, adapter_type, issue_id, context_snapshot, started_at, created_at)
     VALUES ($1, $2, $3, $4, 'process', $5, $6, now(), COALESCE($7, now())) RETURNING id`,
    [
      companyId,
      agentId,
      f.status ?? 'running',
      f.invocationSource ?? 'on_demand',
      f.issueId ?? null,
      JSON.stringify(f.context ?? {}),
      f.createdAt ?? null,
    ],
  );
  return row.id as string;
}

export async function sqlFinishRun(t: TestApp, runId: string, status = 'succeeded'): Promise<void> {
  await t.dataSource.query(`UPDATE heartbeat_runs SET status = $2, finished_at = now() WHERE id = $1`, [runId, status]);
}
