import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { RequestInit as UndiciRequestInit } from 'undici';
import type { OutboundTarget } from '../../common/net/outbound-guard';
import { VERSION } from '../../version';
import type { RemoteTool } from './tool-connections.repository';

/** How long one remote call may take (listing or a tool call). */
const CALL_TIMEOUT_MS = 60_000;
const MAX_LISTED_TOOLS = 500;

/**
 * The gateway's side of a remote connection: the SDK's MCP client over Streamable HTTP, one short
 * session per operation (initialize, the request, close), every request through the outbound
 * guard (public destinations only, checked in the connection's own DNS lookup and on redirects)
 * with the connection's headers, secret ones included. Nothing here is kept between calls.
 */
export class RemoteMcpClient {
  constructor(private readonly outbound: OutboundTarget) {}

  async listTools(url: string, headers: Record<string, string>): Promise<RemoteTool[]> {
    return this.session(url, headers, async (client) => {
      const tools: RemoteTool[] = [];
      let cursor: string | undefined;
      do {
        const page = await client.listTools(cursor ? { cursor } : {}, { timeout: CALL_TIMEOUT_MS });
        for (const t of page.tools)
          tools.push({
            name: t.name,
            title: t.title ?? t.annotations?.title ?? null,
            description: t.description ?? null,
            inputSchema: (t.inputSchema as Record<string, unknown>) ?? null,
            annotations: (t.annotations as Record<string, unknown> | undefined) ?? null,
          });
        cursor = page.nextCursor;
      } while (cursor && tools.length < MAX_LISTED_TOOLS);
      return tools.slice(0, MAX_LISTED_TOOLS);
    });
  }

  async callTool(url: string, headers: Record<string, string>, name: string, args: Record<string, unknown>): Promise<CallToolResult> {
    return this.session(url, headers, async (client) => {
      const result = await client.callTool({ name, arguments: args }, undefined, { timeout: CALL_TIMEOUT_MS });
      return result as CallToolResult;
    });
  }

  private async session<T>(url: string, headers: Record<string, string>, fn: (c: Client) => Promise<T>): Promise<T> {
    const { guard, options } = this.outbound;
    const transport = new StreamableHTTPClientTransport(new URL(url), {
      requestInit: { headers },
      fetch: (input, init) => guard.fetch(input, init as UndiciRequestInit, options) as unknown as Promise<Response>,
    });
    const client = new Client({ name: 'agent-orchestration-service-gateway', version: VERSION }, { capabilities: {} });
    try {
      await client.connect(transport, { timeout: CALL_TIMEOUT_MS });
      return await fn(client);
    } finally {
      await client.close().catch(() => undefined);
    }
  }
}
