import { Injectable } from '@nestjs/common';
import { InstanceRepository } from '../../database/company-scoped.repository';
import { Db } from '../../database/db.service';
import { iso, isoRequired, recordColumns } from '../../database/row-mapping';
import { BoardTokenResponseDto } from './dto/auth.dto';

export interface SessionRecord {
  id: string;
  userId: string;
  expiresAt: Date;
  createdAt: Date;
}

const SESSION_COLUMNS = recordColumns('id, user_id, expires_at, created_at');

export interface SessionResponse {
  id: string;
  userId: string;
  expiresAt: string;
  createdAt: string;
}

export const toSessionResponse = (s: SessionRecord): SessionResponse => ({
  id: s.id,
  userId: s.userId,
  expiresAt: isoRequired(s.expiresAt),
  createdAt: isoRequired(s.createdAt),
});

/** A board token as selected: its response with the timestamps still Dates. */
type SelectedBoardToken = Omit<BoardTokenResponseDto, 'expiresAt' | 'revokedAt' | 'lastUsedAt' | 'createdAt'> & {
  expiresAt: Date | null;
  revokedAt: Date | null;
  lastUsedAt: Date | null;
  createdAt: Date;
};

const toBoardTokenResponse = (t: SelectedBoardToken): BoardTokenResponseDto => ({
  ...t,
  expiresAt: iso(t.expiresAt),
  revokedAt: iso(t.revokedAt),
  lastUsedAt: iso(t.lastUsedAt),
  createdAt: isoRequired(t.createdAt),
});

// never token_hash
const TOKEN_COLUMNS = recordColumns('id, name, token_prefix, expires_at, revoked_at, last_used_at, created_at');

/** A live credential found by its hash, with its user's instance role. */
export interface CredentialRecord {
  id: string;
  userId: string;
  instanceRole: string | null;
  /** last seen (or used) more than a minute ago, or never */
  stale: boolean;
}

/**
 * Tables user_sessions and board_api_tokens (reading users for the credential's instance role).
 * Credential lookups run straight on the pool, outside any request transaction.
 */
@Injectable()
export class SessionsRepository extends InstanceRepository {
  constructor(db: Db) {
    super(db);
  }

  // ---- user_sessions

  async insertSession(userId: string, tokenHash: string, userAgent: string | null, ttlHours: number): Promise<SessionRecord> {
    const [session] = await this.rows<SessionRecord>(
      `INSERT INTO user_sessions (user_id, token_hash, user_agent, expires_at)
       VALUES ($1, $2, $3, now() + make_interval(hours => $4)) RETURNING ${SESSION_COLUMNS}`,
      [userId, tokenHash, userAgent, ttlHours],
    );
    return session;
  }

  async findSession(sessionId: string): Promise<SessionRecord | undefined> {
    const [row] = await this.rows<SessionRecord>(`SELECT ${SESSION_COLUMNS} FROM user_sessions WHERE id = $1`, [sessionId]);
    return row;
  }

  /** Revoking twice keeps the first time. */
  async revokeSession(sessionId: string): Promise<void> {
    await this.rows(`UPDATE user_sessions SET revoked_at = coalesce(revoked_at, now()) WHERE id = $1`, [sessionId]);
  }

  /** The unrevoked, unexpired session of a token hash. */
  async findLiveSession(tokenHash: string): Promise<CredentialRecord | undefined> {
    const [row] = await this.rows<CredentialRecord>(
      `SELECT s.id, s.user_id AS "userId", u.instance_role AS "instanceRole", (s.last_seen_at IS NULL OR s.last_seen_at < now() - interval '1 minute') AS stale
         FROM user_sessions s JOIN users u ON u.id = s.user_id
        WHERE s.token_hash = $1 AND s.revoked_at IS NULL AND s.expires_at > now()`,
      [tokenHash],
      { detached: true },
    );
    return row;
  }

  /** Best effort, not awaited. */
  touchSession(sessionId: string): void {
    this.touch('user_sessions', 'last_seen_at', sessionId);
  }

  // ---- board_api_tokens

  async insertBoardToken(t: {
    userId: string;
    name: string;
    tokenHash: string;
    tokenPrefix: string;
    expiresInDays: number | null;
  }): Promise<BoardTokenResponseDto> {
    const [row] = await this.rows<SelectedBoardToken>(
      `INSERT INTO board_api_tokens (user_id, name, token_hash, token_prefix, expires_at)
       VALUES ($1, $2, $3, $4, CASE WHEN $5::int IS NULL THEN NULL ELSE now() + make_interval(days => $5::int) END) RETURNING ${TOKEN_COLUMNS}`,
      [t.userId, t.name, t.tokenHash, t.tokenPrefix, t.expiresInDays],
    );
    return toBoardTokenResponse(row);
  }

  async listBoardTokens(userId: string): Promise<BoardTokenResponseDto[]> {
    const rows = await this.rows<SelectedBoardToken>(
      `SELECT ${TOKEN_COLUMNS} FROM board_api_tokens WHERE user_id = $1 ORDER BY created_at DESC, id`,
      [userId],
    );
    return rows.map(toBoardTokenResponse);
  }

  /** The revoked token, or undefined when the user has no token of that id. Revoking twice keeps the first time. */
  async revokeBoardToken(tokenId: string, userId: string): Promise<BoardTokenResponseDto | undefined> {
    const [row] = await this.rows<SelectedBoardToken>(
      `WITH changed AS (UPDATE board_api_tokens SET revoked_at = coalesce(revoked_at, now()) WHERE id = $1 AND user_id = $2 RETURNING ${TOKEN_COLUMNS}) SELECT * FROM changed`,
      [tokenId, userId],
    );
    return row ? toBoardTokenResponse(row) : undefined;
  }

  /** The unrevoked, unexpired board token of a token hash. */
  async findLiveBoardToken(tokenHash: string): Promise<CredentialRecord | undefined> {
    const [row] = await this.rows<CredentialRecord>(
      `SELECT t.id, t.user_id AS "userId", u.instance_role AS "instanceRole", (t.last_used_at IS NULL OR t.last_used_at < now() - interval '1 minute') AS stale
         FROM board_api_tokens t JOIN users u ON u.id = t.user_id
        WHERE t.token_hash = $1 AND t.revoked_at IS NULL AND (t.expires_at IS NULL OR t.expires_at > now())`,
      [tokenHash],
      { detached: true },
    );
    return row;
  }

  /** Best effort, not awaited. */
  touchBoardToken(tokenId: string): void {
    this.touch('board_api_tokens', 'last_used_at', tokenId);
  }

  private touch(table: 'user_sessions' | 'board_api_tokens', column: string, id: string): void {
    void this.rows(`UPDATE ${table} SET ${column} = now() WHERE id = $1`, [id], { detached: true }).catch(() => undefined);
  }
}
