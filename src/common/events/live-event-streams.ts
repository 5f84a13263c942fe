import { Injectable, Logger, OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { fastifyCookie } from '@fastify/cookie';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocket, WebSocketServer } from 'ws';
import { AppConfig } from '../../config/app-config';
import type { Actor } from '../auth/actor';
import { ActorResolver, CredentialRequest } from '../auth/actor-resolver';
import { CompanyAccessService } from '../auth/company-access.service';
import { DomainError } from '../errors/domain-error';
import { LiveEventHub, LiveEventSink, LiveSubscription } from './live-event-hub';
import type { LiveEvent } from './live-event.types';

/** Close codes of the stream (WebSocket close frames; the last SSE message carries the same). */
export const CLOSE = {
  shuttingDown: 1001,
  error: 1011,
  /** the credential is no longer valid (signed out, key revoked) */
  unauthorized: 4401,
  /** the caller lost access to the company */
  forbidden: 4403,
  /** the client fell too far behind; reconnect and resume with ?after=<last id> */
  slowConsumer: 4008,
} as const;

const WS_PATH = /^\/api\/companies\/([^/?#]+)\/events\/ws\/?$/;

/** `?after=` or `Last-Event-ID`: a non-negative integer; anything else is a 400. */
export function parseResumeId(raw: unknown, name: string): number | undefined {
  if (raw === undefined || raw === '') return undefined;
  const s = Array.isArray(raw) ? raw[0] : raw;
  if (typeof s !== 'string' || !/^\d{1,15}$/.test(s))
    throw new DomainError(400, 'validation_failed', `${name} must be a non-negative integer event id`);
  return Number(s);
}

/**
 * The transports of the live event stream: Server-Sent Events on a hijacked Fastify reply, and
 * WebSocket (`ws`) on the HTTP server's upgrade. Both authenticate like every route, check company
 * access, ping idle connections, re-check the credential and access at every ping, and close a
 * client that falls too far behind instead of buffering for it. A stream opened with a run token is
 * closed (4401) with the event that ends its run.
 */
@Injectable()
export class LiveEventStreams implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger('LiveEvents');
  private readonly wss = new WebSocketServer({ noServer: true, maxPayload: 4096, perMessageDeflate: false });
  private readonly onUpgrade = (req: IncomingMessage, socket: Duplex, head: Buffer) => void this.upgrade(req, socket, head);

  constructor(
    private readonly hub: LiveEventHub,
    private readonly actors: ActorResolver,
    private readonly companies: CompanyAccessService,
    private readonly config: AppConfig,
    private readonly adapterHost: HttpAdapterHost,
  ) {}

  onApplicationBootstrap(): void {
    this.adapterHost.httpAdapter.getHttpServer().on('upgrade', this.onUpgrade);
  }

  onModuleDestroy(): void {
    this.adapterHost.httpAdapter?.getHttpServer()?.off('upgrade', this.onUpgrade);
    for (const ws of this.wss.clients) ws.close(CLOSE.shuttingDown, 'service shutting down');
    this.wss.close();
  }

  /** SSE: the reply is taken over and stays open until the client leaves or is closed. */
  async serveSse(req: FastifyRequest, reply: FastifyReply, companyId: string, actor: Actor, after: number | undefined): Promise<void> {
    const res = reply.raw;
    const start = after ?? (await this.hub.position(companyId));
    let sub: LiveSubscription | undefined;
    let ended = false;
    const credential: CredentialRequest = { headers: req.headers, cookies: req.cookies, socket: req.socket };
    const timer = setInterval(() => {
      if (!ended) res.write(': ping\n\n');
      void this.recheck(credential, companyId).then((bad) => bad && end(bad.code, bad.reason));
    }, this.config.events.pingMs);
    timer.unref();
    const end = (code?: number, reason?: string) => {
      if (ended) return;
      ended = true;
      clearInterval(timer);
      sub?.unsubscribe();
      if (code !== undefined && !res.destroyed) res.write(`event: close\ndata: ${JSON.stringify({ code, reason })}\n\n`);
      res.end();
    };
    const sink: LiveEventSink = {
      send: (events) => {
        if (ended) return false;
        for (const e of events) {
          if (runEndedBy(actor, e)) {
            res.write(sseMessage(e));
            end(CLOSE.unauthorized, RUN_ENDED);
            return false;
          }
          if (res.writableLength > this.config.events.maxBufferedBytes) {
            this.closeSlow(sub, (code, reason) => {
              end(code, reason);
              // a client that reads nothing never takes the close message either
              setTimeout(() => res.destroy(), 5000).unref();
            });
            return false;
          }
          res.write(sseMessage(e));
        }
        return true;
      },
      close: (code, reason) => end(code, reason),
    };
    reply.hijack();
    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache, no-transform',
      connection: 'keep-alive',
      'x-accel-buffering': 'no',
    });
    res.write(`retry: 2000\n: connected to company ${companyId}\n\n`);
    req.raw.on('close', () => end());
    try {
      sub = await this.hub.subscribe(companyId, actor, sink, start);
      if (ended) sub.unsubscribe();
      // a run that ended between the credential check and the subscription: its status event may be behind the start
      else void this.recheck(credential, companyId).then((bad) => bad && end(bad.code, bad.reason));
    } catch (err) {
      this.logger.error(`could not open a live event stream: ${(err as Error).message}`);
      end(CLOSE.error, 'could not open the stream');
    }
  }

  private async upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const m = WS_PATH.exec(url.pathname);
    if (!m) {
      if (this.adapterHost.httpAdapter.getHttpServer().listenerCount('upgrade') === 1)
        refuse(socket, new DomainError(404, 'not_found', 'No WebSocket endpoint at this path'));
      return;
    }
    const companyId = decodeURIComponent(m[1]);
    socket.on('error', () => undefined);
    try {
      const token = url.searchParams.get('token');
      const credential: CredentialRequest = {
        headers: token && !req.headers.authorization ? { ...req.headers, authorization: `Bearer ${token}` } : req.headers,
        cookies: req.headers.cookie ? fastifyCookie.parse(req.headers.cookie) : {},
        socket: req.socket,
      };
      const actor = await this.actors.resolve(credential);
      if (!actor) throw new DomainError(401, 'unauthorized', 'Authentication required');
      // a session cookie travels with cross-site sockets too: those must come from the service's own pages
      if (actor.kind === 'board' && actor.source === 'session' && !credential.headers.authorization && !sameOrigin(req)) {
        throw new DomainError(403, 'forbidden', 'Cross-origin WebSocket with a session cookie refused');
      }
      if (actor.kind === 'agent' && actor.runEnded) throw new DomainError(401, 'unauthorized', 'Run token of a run that is no longer live');
      await this.companies.assertCompanyAccess(actor, companyId);
      // where the stream starts is fixed now: what happens while the upgrade completes is caught up
      const after = parseResumeId(url.searchParams.get('after') ?? undefined, 'after') ?? (await this.hub.position(companyId));
      this.wss.handleUpgrade(req, socket, head, (ws) => void this.serveWs(ws, credential, companyId, actor, after));
    } catch (err) {
      refuse(socket, err);
    }
  }

  private async serveWs(
    ws: WebSocket,
    credential: CredentialRequest,
    companyId: string,
    actor: Actor,
    after: number | undefined,
  ): Promise<void> {
    let sub: LiveSubscription | undefined;
    let lastPong = Date.now();
    // a peer that answers no ping for this long is gone (half-open connection)
    const deadAfterMs = Math.max(2 * this.config.events.pingMs, 30_000);
    const close = (code: number, reason: string) => {
      sub?.unsubscribe();
      if (ws.readyState === WebSocket.OPEN) ws.close(code, reason);
      // a peer that reads nothing never answers the close frame
      setTimeout(() => ws.terminate(), 5000).unref();
    };
    const sink: LiveEventSink = {
      send: (events) => {
        if (ws.readyState !== WebSocket.OPEN) return false;
        for (const e of events) {
          if (runEndedBy(actor, e)) {
            ws.send(JSON.stringify(e));
            close(CLOSE.unauthorized, RUN_ENDED);
            return false;
          }
          // checked before each message: the close frame queues behind at most the limit
          if (ws.bufferedAmount > this.config.events.maxBufferedBytes) {
            this.closeSlow(sub, close);
            return false;
          }
          ws.send(JSON.stringify(e));
        }
        return true;
      },
      close,
    };
    const timer = setInterval(() => {
      if (Date.now() - lastPong > deadAfterMs) {
        ws.terminate();
        return;
      }
      ws.ping();
      void this.recheck(credential, companyId).then((bad) => bad && close(bad.code, bad.reason));
    }, this.config.events.pingMs);
    timer.unref();
    ws.on('pong', () => (lastPong = Date.now()));
    ws.on('message', () => undefined); // the stream is one-way; client messages are ignored
    ws.on('error', () => undefined);
    ws.on('close', () => {
      clearInterval(timer);
      sub?.unsubscribe();
    });
    try {
      sub = await this.hub.subscribe(companyId, actor, sink, after);
      if (ws.readyState !== WebSocket.OPEN) sub.unsubscribe();
      else void this.recheck(credential, companyId).then((bad) => bad && close(bad.code, bad.reason));
    } catch (err) {
      this.logger.error(`could not open a live event socket: ${(err as Error).message}`);
      close(CLOSE.error, 'could not open the stream');
    }
  }

  private closeSlow(sub: LiveSubscription | undefined, close: (code: number, reason: string) => void): void {
    const last = sub?.cursor ?? 0;
    this.logger.warn(`closing a live event client of company ${sub?.companyId ?? '?'} that fell too far behind`);
    close(CLOSE.slowConsumer, `too far behind; reconnect with ?after=${last}`);
  }

  /** Is the connection's credential still valid, and does it still reach the company? */
  private async recheck(credential: CredentialRequest, companyId: string): Promise<{ code: number; reason: string } | null> {
    try {
      const actor = await this.actors.resolve(credential);
      if (!actor || (actor.kind === 'agent' && actor.runEnded)) return { code: CLOSE.unauthorized, reason: 'credential no longer valid' };
      if (!(await this.companies.companyExists(companyId)) || !(await this.companies.canAccess(actor, companyId))) {
        return { code: CLOSE.forbidden, reason: 'no access to this company' };
      }
      return null;
    } catch (err) {
      if (err instanceof DomainError && err.status === 401) return { code: CLOSE.unauthorized, reason: 'credential no longer valid' };
      return null; // a database hiccup is not a reason to drop clients; the next ping checks again
    }
  }
}

const RUN_ENDED = 'the run of this run token ended';
const LIVE_RUN_STATUSES = new Set(['queued', 'running']);

/**
 * A stream opened with a run token lasts as long as its run: the status event that ends the run
 * (delivered to every instance through the database) is its last message.
 */
function runEndedBy(actor: Actor, e: LiveEvent): boolean {
  return (
    actor.kind === 'agent' &&
    actor.source === 'run_token' &&
    e.type === 'heartbeat.run.status' &&
    e.payload.runId === actor.runId &&
    typeof e.payload.status === 'string' &&
    !LIVE_RUN_STATUSES.has(e.payload.status)
  );
}

function sseMessage(e: LiveEvent): string {
  return `id: ${e.id}\ndata: ${JSON.stringify(e)}\n\n`;
}

function sameOrigin(req: IncomingMessage): boolean {
  const origin = req.headers.origin;
  if (!origin) return true; // not a browser
  try {
    return new URL(origin).host === req.headers.host;
  } catch {
    return false;
  }
}

/** Answers a refused upgrade with the JSON error body every route uses, then closes the socket. */
function refuse(socket: Duplex, err: unknown): void {
  const e = err instanceof DomainError ? err : new DomainError(500, 'internal_error', 'Internal error');
  if (!(err instanceof DomainError)) new Logger('LiveEvents').error(`WebSocket upgrade failed: ${(err as Error)?.message}`);
  const body = JSON.stringify({ error: e.message, code: e.code, ...e.extra });
  const reason = { 400: 'Bad Request', 401: 'Unauthorized', 403: 'Forbidden', 404: 'Not Found' }[e.status] ?? 'Error';
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  socket.end(
    `HTTP/1.1 ${e.status} ${reason}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
  setTimeout(() => socket.destroy(), 1000).unref();
}
