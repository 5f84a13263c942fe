import { Injectable } from '@nestjs/common';
import type { FastifyRequest as Request } from 'fastify';
import type { BoardActor } from '../../common/auth/actor';
import type { CredentialResolver } from '../../common/auth/auth-registry.port';
import { sha256Hex, tokenKind } from '../../common/auth/tokens';
import { unauthorized } from '../../common/errors/domain-error';
import { sessionCookie } from './session-cookie';
import { SessionsRepository } from './sessions.repository';

/**
 * Board callers of an authenticated instance: sessions (`svc_ss_`, as bearer or `svc_session`
 * cookie) and board API tokens (`svc_bt_`, bearer). Lookups go by SHA-256, outside any request
 * transaction; unknown, expired or revoked bearer credentials are 401. A stale cookie is ignored
 * (the caller is then unauthenticated), so that signing in again is never blocked by it.
 */
@Injectable()
export class UserCredentialResolver implements CredentialResolver {
  readonly name = 'user_credentials';

  constructor(private readonly credentials: SessionsRepository) {}

  async resolve(token: string | undefined, req: Request): Promise<BoardActor | null> {
    if (token !== undefined) {
      const kind = tokenKind(token);
      if (kind === 'ss') return (await this.session(token)) ?? this.reject('session');
      if (kind === 'bt') return (await this.boardToken(token)) ?? this.reject('board token');
      return null;
    }
    const cookie = sessionCookie(req);
    if (cookie && tokenKind(cookie) === 'ss') return this.session(cookie);
    return null;
  }

  private reject(what: string): never {
    throw unauthorized(`Invalid, expired or revoked ${what}`);
  }

  private async session(token: string): Promise<BoardActor | null> {
    const row = await this.credentials.findLiveSession(sha256Hex(token));
    if (!row) return null;
    // best effort, at most once a minute per credential
    if (row.stale) this.credentials.touchSession(row.id);
    return { kind: 'board', userId: row.userId, isInstanceAdmin: row.instanceRole !== null, source: 'session', credentialId: row.id };
  }

  private async boardToken(token: string): Promise<BoardActor | null> {
    const row = await this.credentials.findLiveBoardToken(sha256Hex(token));
    if (!row) return null;
    if (row.stale) this.credentials.touchBoardToken(row.id);
    return { kind: 'board', userId: row.userId, isInstanceAdmin: row.instanceRole !== null, source: 'board_token', credentialId: row.id };
  }
}
