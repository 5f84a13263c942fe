import { Injectable } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { AppConfig } from '../../config/app-config';
import { DomainError, unauthorized } from '../errors/domain-error';
import { hostRefusal } from '../net/host-check';
import { Actor, LOCAL_BOARD_USER_ID } from './actor';
import { AuthRegistry } from './auth-registry.port';
import { LocalPeers } from './local-peers';
import type { ConnectionEnds } from '../net/socket-owner';

/** What credential resolution reads of a request: its headers, parsed cookies and (for the local board) its connection. */
export type CredentialRequest = Pick<FastifyRequest, 'headers' | 'cookies'> & { socket?: ConnectionEnds & object };

/**
 * Who is calling: the bearer token (or a session cookie) through the registered resolvers; in local
 * trusted mode a call without credentials is the implicit board when it comes from a person's
 * process on this host, never from an agent or plugin worker of any instance (LocalPeers: the
 * peer's uid from the kernel's socket table). 401 for a malformed header, an invalid credential or
 * a credential-less agent; undefined when there is none. Used by the guard and by the live-event
 * socket.
 */
@Injectable()
export class ActorResolver {
  constructor(
    private readonly config: AppConfig,
    private readonly registry: AuthRegistry,
    private readonly peers: LocalPeers,
  ) {}

  async resolve(req: CredentialRequest): Promise<Actor | undefined> {
    const header = req.headers.authorization;
    let token: string | undefined;
    if (header !== undefined) {
      const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
      if (!m) throw unauthorized('Malformed Authorization header; expected "Bearer <token>"');
      token = m[1];
    }
    for (const resolver of this.registry.resolvers) {
      const actor = await resolver.resolve(token, req as FastifyRequest);
      if (actor) return actor;
    }
    if (token) throw unauthorized('Invalid or revoked credentials');
    if (this.config.deploymentMode === 'local_trusted') {
      if (await this.peers.isLocalBoard(req)) {
        const refusal = hostRefusal(req.headers.host, req.headers.origin, this.config.publicUrl);
        if (refusal) throw new DomainError(403, 'host_not_allowed', refusal);
        return { kind: 'board', userId: LOCAL_BOARD_USER_ID, isInstanceAdmin: true, source: 'local_implicit' };
      }
      throw unauthorized(
        'Authentication required: agent and plugin processes are never the local board (send the run token or an API key)',
      );
    }
    return undefined;
  }
}
