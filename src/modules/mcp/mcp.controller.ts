import { Controller, Delete, Get, HttpCode, Post, Req, Res } from '@nestjs/common';
import { ApiBody, ApiExtension, ApiHeader, ApiOkResponse, ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { NoActivity } from '../../common/activity/log-activity.decorator';
import type { Actor } from '../../common/auth/actor';
import { Authorize } from '../../common/auth/authorize.decorator';
import { CurrentActor } from '../../common/auth/current-actor.decorator';
import { AppConfig } from '../../config/app-config';
import { McpService } from './mcp.service';

const JSON_RPC = {
  type: 'object',
  description: 'A JSON-RPC 2.0 message of the Model Context Protocol (or a batch of them)',
  properties: {
    jsonrpc: { type: 'string', enum: ['2.0'] },
    id: { oneOf: [{ type: 'string' }, { type: 'integer' }] },
    method: { type: 'string' },
    params: { type: 'object' },
  },
  required: ['jsonrpc'],
};

@ApiTags('mcp')
@Controller('mcp')
export class McpController {
  constructor(
    private readonly mcp: McpService,
    private readonly config: AppConfig,
  ) {}

  /**
   * The service as an MCP server (Streamable HTTP, stateless: no session id; JSON responses). With a
   * run token (and `X-Service-Run-Id`) it offers the agent's own API as tools (identity, inbox,
   * checkout, issues, comments, documents, delegation, costs, questions to the board) plus the
   * company's tool connections allowed to the agent; with a board credential, or an agent key
   * without a run, the board's tools (issues, assignment, comments, runs, costs). Each tool calls
   * the REST route it stands for, with its authorization and activity records. Send
   * `Accept: application/json, text/event-stream`. See docs/mcp.md.
   */
  @Post()
  @HttpCode(200)
  @Authorize({ callers: ['board', 'agent'] })
  @NoActivity('each tool call writes the records of the routes it calls')
  @ApiOperation({ summary: 'MCP endpoint (Streamable HTTP)' })
  @ApiHeader({ name: 'Accept', required: true, description: 'application/json, text/event-stream' })
  @ApiHeader({ name: 'MCP-Protocol-Version', required: false, description: 'the negotiated protocol version, after initialize' })
  @ApiBody({ schema: { oneOf: [JSON_RPC, { type: 'array', items: JSON_RPC }] } })
  @ApiOkResponse({ description: 'The JSON-RPC response(s)', content: { 'application/json': { schema: { type: 'object' } } } })
  @ApiResponse({ status: 202, description: 'Accepted: the body held only notifications or responses' })
  @ApiResponse({ status: 406, description: 'The Accept header does not allow application/json and text/event-stream' })
  @ApiExtension('x-mcp', { transport: 'streamable-http', stateless: true })
  async post(@Req() req: FastifyRequest, @Res() reply: FastifyReply, @CurrentActor() actor: Actor): Promise<void> {
    await this.mcp.handle(req, reply, actor);
  }

  /** A stateless server opens no stream of its own: 405 (clients then use POST only). */
  @Get()
  @Authorize({ callers: ['board', 'agent'] })
  @ApiResponse({ status: 405, description: 'No server-initiated stream: this server is stateless' })
  get(@Res() reply: FastifyReply): void {
    notAllowed(reply);
  }

  /** No session to end: 405. */
  @Delete()
  @Authorize({ callers: ['board', 'agent'] })
  @NoActivity('there is no session to end')
  @ApiResponse({ status: 405, description: 'No session to end: this server is stateless' })
  remove(@Res() reply: FastifyReply): void {
    notAllowed(reply);
  }
}

function notAllowed(reply: FastifyReply): void {
  void reply
    .status(405)
    .header('Allow', 'POST')
    .send({ error: 'This MCP server is stateless: send JSON-RPC messages with POST', code: 'method_not_allowed' });
}
