import { Injectable, Logger } from '@nestjs/common';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolRequestSchema, ListToolsRequestSchema, type CallToolResult, type Tool } from '@modelcontextprotocol/sdk/types.js';
import Ajv, { type ValidateFunction } from 'ajv';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Actor } from '../../common/auth/actor';
import { Db } from '../../database/db.service';
import { VERSION } from '../../version';
import { ToolGateway } from '../tools/tool-gateway.service';
import { McpRouteCaller } from './mcp-route-caller';
import { McpToolAuthority } from './mcp-tool-authority';
import { inputSchemaFor, SERVICE_TOOLS, type ServiceTool, type ToolArgs, type ToolCaller } from './service-tools';

/** The server's name in initialize; the CLIs' configurations call it `aos` (mcp-config.ts). */
export const MCP_SERVER_NAME = 'agent-orchestration-service';

const INSTRUCTIONS =
  'The Agent Orchestration Service: your company’s issues, comments, documents and runs. In a heartbeat run: whoami, inbox, ' +
  'checkout_issue before you work on an issue, read_issue, add_comment as you go, write_document for durable results, ' +
  'update_issue to in_review/done/blocked at the end (release_issue if you stop before finishing). Tools named <connection>__<tool> ' +
  'are your company’s tool connections, reached through the service.';

/** A tool result the model can act on: the route's answer as JSON, or its error with status and code. */
export function routeResult(status: number, body: unknown): CallToolResult {
  if (status < 400) return { content: [{ type: 'text', text: JSON.stringify(body ?? null) }] };
  return errorResult(status, body);
}

export function errorResult(status: number, body: unknown): CallToolResult {
  const b = (body && typeof body === 'object' ? body : { error: String(body ?? '') }) as { error?: unknown; code?: unknown };
  const code = typeof b.code === 'string' ? b.code : `http_${status}`;
  const message = typeof b.error === 'string' && b.error ? b.error : `HTTP ${status}`;
  return { isError: true, content: [{ type: 'text', text: `Error ${status} (${code}): ${message}\n${JSON.stringify(body ?? null)}` }] };
}

/**
 * The id the agent's runtime gave a tool call, from the request's `_meta`: Claude Code sends its
 * tool use id as `claudecode/toolUseId`. A gateway call keeps it, so the run page pairs the call's
 * decision with the call in the transcript. Anything else (absent, not a short string) is null.
 */
export function toolUseIdOf(meta: unknown): string | null {
  const id = meta && typeof meta === 'object' ? (meta as Record<string, unknown>)['claudecode/toolUseId'] : undefined;
  return typeof id === 'string' && id.length > 0 && id.length <= 200 ? id : null;
}

/** Who the MCP caller is, as the tools see it. */
export function toolCaller(actor: Actor): ToolCaller {
  if (actor.kind === 'board') return { audience: 'board' };
  return { audience: actor.runId ? 'run' : 'agent', agentId: actor.agentId, companyId: actor.companyId, runId: actor.runId };
}

/**
 * `/api/mcp`: the Streamable HTTP transport of the official SDK, stateless (a server and a transport
 * per HTTP request, JSON responses). No session lives in one process, so any instance of the
 * service answers any request of a client, and a restart loses nothing: the caller is resolved
 * from its credentials on every request, as on REST.
 */
@Injectable()
export class McpService {
  private readonly logger = new Logger('Mcp');
  private readonly ajv = new Ajv({ allErrors: true, strict: false, validateFormats: false });
  private readonly validators = new Map<string, ValidateFunction>();

  constructor(
    private readonly routes: McpRouteCaller,
    private readonly authority: McpToolAuthority,
    private readonly gateway: ToolGateway,
    private readonly db: Db,
  ) {}

  /** Answers one MCP HTTP request; the reply is taken over (the SDK writes the Node response). */
  async handle(req: FastifyRequest, reply: FastifyReply, actor: Actor): Promise<void> {
    reply.hijack();
    reply.raw.setHeader('X-Request-Id', String(req.id));
    // tool calls run their routes' own transactions: none of the MCP request's may be open around them
    await this.db.detached(async () => {
      const server = this.server(req, actor);
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
      reply.raw.on('close', () => {
        void transport.close().catch(() => undefined);
        void server.close().catch(() => undefined);
      });
      try {
        await server.connect(transport);
        await transport.handleRequest(req.raw, reply.raw, req.body);
      } catch (err) {
        this.logger.error(`MCP request ${req.id} failed: ${(err as Error).message}`);
        if (!reply.raw.headersSent) {
          reply.raw.writeHead(500, { 'content-type': 'application/json' });
          reply.raw.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32603, message: 'Internal error' }, id: null }));
        }
      }
    });
  }

  private server(req: FastifyRequest, actor: Actor): Server {
    const caller = toolCaller(actor);
    const server = new Server(
      { name: MCP_SERVER_NAME, title: 'Agent Orchestration Service', version: VERSION },
      { capabilities: { tools: { listChanged: false }, logging: {} }, instructions: INSTRUCTIONS },
    );
    server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: await this.list(actor, caller) }));
    server.setRequestHandler(CallToolRequestSchema, async (r) =>
      this.call(req, actor, caller, r.params.name, r.params.arguments ?? {}, toolUseIdOf(r.params._meta)),
    );
    return server;
  }

  /**
   * What this caller may use: the service's tools of its kind whose routes' authorization allows it
   * (a tool with an `authority`: for some target), and in a run its company's tool connections.
   */
  async list(actor: Actor, caller: ToolCaller): Promise<Tool[]> {
    const ofKind = SERVICE_TOOLS.filter((t) => t.audiences.includes(caller.audience));
    const allowed = await this.authority.allowed(
      actor,
      ofKind.flatMap((t) => (t.authority ? [t.authority] : [])),
    );
    const own = ofKind.filter((t) => !t.authority || allowed.has(t.authority)).map((t) => this.describe(t, caller));
    const connected = actor.kind === 'agent' && caller.audience === 'run' ? await this.gateway.toolsFor(actor) : [];
    return [...own, ...connected];
  }

  private describe(t: ServiceTool, caller: ToolCaller): Tool {
    return {
      name: t.name,
      title: t.title,
      description: t.description,
      inputSchema: inputSchemaFor(t, caller.audience) as Tool['inputSchema'],
      annotations: { title: t.title, readOnlyHint: !!t.readOnly, destructiveHint: false, openWorldHint: false },
    };
  }

  private async call(
    req: FastifyRequest,
    actor: Actor,
    caller: ToolCaller,
    name: string,
    args: ToolArgs,
    toolUseId: string | null = null,
  ): Promise<CallToolResult> {
    const tool = SERVICE_TOOLS.find((t) => t.name === name && t.audiences.includes(caller.audience));
    if (!tool) {
      if (actor.kind === 'agent' && caller.audience === 'run') {
        const viaGateway = await this.gateway.call(actor, name, args, toolUseId);
        if (viaGateway) return viaGateway;
      }
      return errorResult(404, { error: `No tool named ${name} for this caller (see tools/list)`, code: 'tool_not_found' });
    }
    const problems = this.check(tool, caller, args);
    if (problems) return errorResult(400, { error: `Invalid arguments: ${problems}`, code: 'validation_failed' });
    const bodies: unknown[] = [];
    for (const r of tool.requests(args, caller)) {
      const answer = await this.routes.call(req, r);
      if (answer.status >= 400) return errorResult(answer.status, answer.body);
      bodies.push(answer.body);
    }
    return routeResult(200, tool.combine ? tool.combine(bodies) : bodies[bodies.length - 1]);
  }

  /** The arguments against the tool's schema: a message naming what is wrong, or null. */
  private check(tool: ServiceTool, caller: ToolCaller, args: ToolArgs): string | null {
    const key = `${tool.name}:${caller.audience}`;
    let validate = this.validators.get(key);
    if (!validate) {
      validate = this.ajv.compile(inputSchemaFor(tool, caller.audience));
      this.validators.set(key, validate);
    }
    if (validate(args)) return null;
    return (validate.errors ?? []).map((e) => `${e.instancePath || '(arguments)'} ${e.message ?? 'is invalid'}`).join('; ');
  }
}
