import { Injectable } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { LocalPeers, PEER_VOUCHER_HEADER } from '../../common/auth/local-peers';
import type { RouteRequest } from './service-tools';

/** The caller's own credentials travel with each route call; nothing else of the MCP request does. */
const FORWARDED = ['authorization', 'cookie', 'x-service-run-id', 'traceparent'];

export interface RouteAnswer {
  status: number;
  body: unknown;
}

/**
 * Carries a tool call out as a call of the REST route it stands for, in process (Fastify's
 * `inject`): the guard resolves the same caller from the same credentials, the route validates,
 * authorizes and writes its activity record (naming the run of a run token) as for any client.
 */
@Injectable()
export class McpRouteCaller {
  constructor(
    private readonly adapterHost: HttpAdapterHost,
    private readonly peers: LocalPeers,
  ) {}

  async call(origin: FastifyRequest, r: RouteRequest): Promise<RouteAnswer> {
    const fastify = this.adapterHost.httpAdapter.getInstance<FastifyInstance>();
    const headers: Record<string, string> = { 'user-agent': 'aos-mcp' };
    for (const name of FORWARDED) {
      const v = origin.headers[name];
      if (typeof v === 'string') headers[name] = v;
    }
    // the call has no connection of its own: it is judged as the caller's (local board or not)
    headers[PEER_VOUCHER_HEADER] = this.peers.voucherFor(origin.socket);
    if (r.body !== undefined) headers['content-type'] = 'application/json';
    const res = await fastify.inject({
      method: r.method,
      url: r.url,
      headers,
      payload: r.body === undefined ? undefined : JSON.stringify(r.body),
      remoteAddress: origin.ip,
    });
    let body: unknown = res.body;
    try {
      body = res.body ? res.json() : null;
    } catch {
      /* not JSON: the text */
    }
    return { status: res.statusCode, body };
  }
}
