import { Injectable } from '@nestjs/common';
import type { FastifyRequest as Request } from 'fastify';
import type { BoardActor } from '../../common/auth/actor';
import type { CredentialResolver } from '../../common/auth/auth-registry';
import { sha256Hex, tokenKind } from '../../common/auth/tokens';
import { unauthorized } from '../../common/errors/domain-error';
import { Db } from '../../database/db.service';
import { sessionCookie } from './session-cookie';

interface CredentialRow {
  id: string;
  user_id: string;
  instance_role: string | null;
  stale: boolean;
}

/**
 * Board callers of an authenticated instance: sessions (`svc_ss_`, as bearer or `svc_session`
 * cookie) and board API tokens (`svc_bt_`, bearer). Lookups go by SHA-256, outside any request
 * transaction; unknown, expired or revoked bearer credentials are 401. A stale cookie is ignored
 * (the caller is then unauthenticated), so that signing in again is never blocked by it.
 */
@Injectable()
export class UserCredentialResolver implements CredentialResolver {
  readonly name = 'user_credentials';

  constructor(private readonly db: Db) {}

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
    const [row] = (await this.db.dataSource.query(
      `SELECT s.id, s.user_id, u.instance_role, (s.last_seen_at IS NULL OR s.last_seen_at < now() - interval '1 minute') AS stale
         FROM user_sessions s JOIN users u ON u.id = s.user_id
        WHERE s.token_hash = $1 AND s.revoked_at IS NULL AND s.expires_at > now()`,
      [sha256Hex(token)],
    )) as CredentialRow[];
    if (!row) return null;
    if (row.stale) this.touch('user_sessions', 'last_seen_at', row.id);
    return { kind: 'board', userId: row.user_id, isInstanceAdmin: row.instance_role !== null, source: 'session', credentialId: row.id };
  }

  private async boardToken(token: string): Promise<BoardActor | null> {
    const [row] = (await this.db.dataSource.query(
      `SELECT t.id, t.user_id, u.instance_role, (t.last_used_at IS NULL OR t.last_used_at < now() - interval '1 minute') AS stale
         FROM board_api_tokens t JOIN users u ON u.id = t.user_id
        WHERE t.token_hash = $1 AND t.revoked_at IS NULL AND (t.expires_at IS NULL OR t.expires_at > now())`,
      [sha256Hex(token)],
    )) as CredentialRow[];
    if (!row) return null;
    if (row.stale) this.touch('board_api_tokens', 'last_used_at', row.id);
    return { kind: 'board', userId: row.user_id, isInstanceAdmin: row.instance_role !== null, source: 'board_token', credentialId: row.id };
  }

  /** best effort, at most once a minute per credential */
  private touch(table: 'user_sessions' | 'board_api_tokens', column: string, id: string): void {
    void this.db.dataSource.query(`UPDATE ${table} SET ${column} = now() WHERE id = $1`, [id]).catch(() => undefined);
  }
}
