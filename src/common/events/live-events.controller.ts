import { Controller, Get, Headers, Param, ParseUUIDPipe, Query, Req, Res } from '@nestjs/common';
import { ApiHeader, ApiOkResponse, ApiProduces, ApiQuery, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Actor } from '../auth/actor';
import { Authorize } from '../auth/authorize.decorator';
import { CurrentActor } from '../auth/current-actor.decorator';
import { liveEventError } from './live-events.errors';
import { LiveEventStreams, parseResumeId } from './live-event-streams';

const MESSAGE =
  '`{ id, companyId, type, createdAt, payload }`; `id` increases per company. Types: `heartbeat.run.queued`, `heartbeat.run.status`, ' +
  '`heartbeat.run.event`, `heartbeat.run.log` (redacted output chunks), `agent.status`, `activity.logged`, `plugin.worker.crashed`, `plugin.worker.restarted`. ' +
  'Events of hidden issues are left out; events stay resumable for SERVICE_EVENTS_RETENTION_SEC (default 15 minutes).';

@ApiTags('events')
@Controller()
export class LiveEventsController {
  constructor(private readonly streams: LiveEventStreams) {}

  /**
   * The company's live event stream as Server-Sent Events (`text/event-stream`): one `data:` line per
   * event with its JSON, `id:` its id, `: ping` comments while idle. Resume after a disconnect with
   * `Last-Event-ID` (browsers send it themselves) or `?after=<id>`. A client that falls too far
   * behind gets `event: close` with `{ code: 4008 }` and is disconnected; a revoked credential or lost
   * access ends the stream with 4401 / 4403.
   */
  @Get('companies/:companyId/events')
  @Authorize({ callers: ['board', 'agent'] })
  @ApiProduces('text/event-stream')
  @ApiQuery({ name: 'after', required: false, type: String, description: 'resume after this event id' })
  @ApiHeader({ name: 'Last-Event-ID', required: false, description: 'resume after this event id (SSE reconnects)' })
  @ApiOkResponse({
    description: `An endless event stream. Each message: ${MESSAGE}`,
    content: { 'text/event-stream': { schema: { type: 'string' } } },
  })
  async sse(
    @Req() req: FastifyRequest,
    @Res() reply: FastifyReply,
    @CurrentActor() actor: Actor,
    @Param('companyId', ParseUUIDPipe) companyId: string,
    @Query('after') after?: string,
    @Headers('last-event-id') lastEventId?: string,
  ): Promise<void> {
    const resume = parseResumeId(after, 'after') ?? parseResumeId(lastEventId, 'Last-Event-ID');
    await this.streams.serveSse(req, reply, companyId, actor, resume);
  }

  /**
   * The same stream over WebSocket: connect with an upgrade request (board session cookie or bearer
   * token; agents may pass their key as `?token=` where a client cannot set headers), one JSON text
   * message per event, resume with `?after=<id>`. Close codes: 4008 too far behind (reconnect with
   * the `after` in the reason), 4401 credential no longer valid, 4403 no access, 1001 shutting down.
   * Refused upgrades answer with the usual JSON error and status (401, 403, 404). A plain GET is 426.
   */
  @Get('companies/:companyId/events/ws')
  @Authorize({ callers: ['board', 'agent'] })
  @ApiQuery({ name: 'after', required: false, type: String })
  @ApiQuery({ name: 'token', required: false, type: String, description: 'bearer credential for clients that cannot set headers' })
  @ApiResponse({ status: 101, description: `Switching protocols; then one message per event: ${MESSAGE}` })
  @ApiResponse({ status: 426, description: 'Not a WebSocket upgrade request' })
  ws(@Param('companyId', ParseUUIDPipe) _companyId: string): never {
    throw liveEventError(
      'upgrade_required',
      'This is a WebSocket endpoint: connect with an upgrade request (or use GET .../events for Server-Sent Events)',
    );
  }
}
