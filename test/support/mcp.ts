import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { RunTokenService } from '../../src/modules/heartbeat/run-token.service';
import { sqlAgent, sqlAgentKey, sqlRun } from './sql';
import type { TestApp } from './test-app';

/** An MCP client (the official SDK's) connected to the app's /api/mcp with these headers. */
export async function mcpClient(t: TestApp, headers: Record<string, string> = {}): Promise<Client> {
  const transport = new StreamableHTTPClientTransport(new URL(`${t.baseUrl}/api/mcp`), { requestInit: { headers } });
  const client = new Client({ name: 'e2e', version: '1.0.0' });
  await client.connect(transport);
  return client;
}

/** An agent with a key and a live run, and the run's token (what a run's process is given). */
export async function agentInRun(t: TestApp, companyId: string, fields: Parameters<typeof sqlAgent>[2] = {}) {
  const agent = await sqlAgent(t, companyId, fields);
  const key = await sqlAgentKey(t, companyId, agent.id);
  const runId = await sqlRun(t, companyId, agent.id);
  const runToken = t.app.get(RunTokenService).issue({ agentId: agent.id, companyId, runId });
  return { ...agent, key, runId, runToken, headers: { Authorization: `Bearer ${runToken}`, 'X-Service-Run-Id': runId } };
}

/** The text of a tool result (its first content block). */
export const resultText = (r: unknown): string => ((r as CallToolResult).content?.[0] as { text?: string } | undefined)?.text ?? '';

/** The JSON of a successful tool result. */
export function resultJson<T = Record<string, any>>(r: unknown): T {
  const res = r as CallToolResult;
  if (res.isError) throw new Error(`tool error: ${resultText(res)}`);
  return JSON.parse(resultText(res)) as T;
}
