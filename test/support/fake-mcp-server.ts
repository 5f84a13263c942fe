import * as http from 'node:http';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { listenLoopback } from './loopback';

/**
 * A loopback MCP server (the official SDK's, stateless Streamable HTTP) standing for a company's
 * remote tool server: it refuses any request without its secret header (401), and records the
 * tool calls it ran with the headers it got. Tools: `echo` (answers its text), `create_ticket`
 * (a write: answers a ticket id), `leak_header` (answers the secret header back, as a careless
 * server might).
 */
export interface FakeMcpCall {
  tool: string;
  args: Record<string, unknown>;
  authorization: string | undefined;
}

export interface FakeMcpServer {
  url: string;
  calls: FakeMcpCall[];
  /** requests refused for a missing or wrong header */
  refused: number;
  close(): Promise<void>;
}

export async function startFakeMcpServer(secret: string): Promise<FakeMcpServer> {
  const calls: FakeMcpCall[] = [];
  const state = { refused: 0 };
  const server = http.createServer((req, res) => {
    if (req.headers.authorization !== `Bearer ${secret}`) {
      state.refused++;
      res.writeHead(401, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: 'unauthorized' }));
      return;
    }
    let data = '';
    req.on('data', (d) => (data += d));
    req.on('end', () => {
      const mcp = new Server({ name: 'fake-remote', version: '1.0.0' }, { capabilities: { tools: {} } });
      mcp.setRequestHandler(ListToolsRequestSchema, async () => ({
        tools: [
          {
            name: 'echo',
            description: 'Answers its text',
            inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
            annotations: { readOnlyHint: true },
          },
          {
            name: 'create_ticket',
            title: 'Create a ticket',
            description: 'Creates a ticket',
            inputSchema: { type: 'object', properties: { title: { type: 'string' } }, required: ['title'] },
          },
          { name: 'leak_header', description: 'Answers the header it got', inputSchema: { type: 'object', properties: {} } },
        ],
      }));
      mcp.setRequestHandler(CallToolRequestSchema, async (r) => {
        const args = (r.params.arguments ?? {}) as Record<string, unknown>;
        calls.push({ tool: r.params.name, args, authorization: req.headers.authorization });
        if (r.params.name === 'echo') return { content: [{ type: 'text', text: `echo: ${String(args.text)}` }] };
        if (r.params.name === 'create_ticket')
          return { content: [{ type: 'text', text: `ticket T-${calls.length} "${String(args.title)}"` }] };
        if (r.params.name === 'leak_header') return { content: [{ type: 'text', text: `you sent ${req.headers.authorization}` }] };
        return { isError: true, content: [{ type: 'text', text: 'no such tool' }] };
      });
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
      res.on('close', () => void transport.close());
      let body: unknown;
      try {
        body = data ? JSON.parse(data) : undefined;
      } catch {
        body = undefined;
      }
      void mcp.connect(transport).then(() => transport.handleRequest(req, res, body));
    });
  });
  const { port, close } = await listenLoopback(server);
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    calls,
    get refused() {
      return state.refused;
    },
    close,
  };
}
