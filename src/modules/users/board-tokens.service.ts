import { Injectable } from '@nestjs/common';
import type { BoardActor } from '../../common/auth/actor';
import { generateToken, sha256Hex, tokenDisplayPrefix } from '../../common/auth/tokens';
import { conflict, notFound } from '../../common/errors/domain-error';
import { isUuid } from '../../common/http/uuid';
import { Db } from '../../database/db.service';
import { BoardTokenResponseDto, CreatedBoardTokenDto } from './dto/auth.dto';

interface BoardTokenRow {
  id: string;
  user_id: string;
  name: string;
  token_prefix: string;
  expires_at: Date | null;
  revoked_at: Date | null;
  last_used_at: Date | null;
  created_at: Date;
}

const iso = (d: Date | null) => (d ? new Date(d).toISOString() : null);

const toBoardTokenResponse = (r: BoardTokenRow): BoardTokenResponseDto => ({
  id: r.id,
  name: r.name,
  tokenPrefix: r.token_prefix,
  expiresAt: iso(r.expires_at),
  revokedAt: iso(r.revoked_at),
  lastUsedAt: iso(r.last_used_at),
  createdAt: new Date(r.created_at).toISOString(),
});

const COLUMNS = 'id, user_id, name, token_prefix, expires_at, revoked_at, last_used_at, created_at';

/** Board API tokens for scripts: `svc_bt_` tokens acting as their user, shown once, stored hashed, revocable. */
@Injectable()
export class BoardTokensService {
  constructor(private readonly db: Db) {}

  async create(actor: BoardActor, name: string, expiresInDays?: number): Promise<CreatedBoardTokenDto> {
    this.assertUser(actor);
    const token = generateToken('bt');
    const [row] = await this.db.query<BoardTokenRow>(
      `INSERT INTO board_api_tokens (user_id, name, token_hash, token_prefix, expires_at)
       VALUES ($1, $2, $3, $4, CASE WHEN $5::int IS NULL THEN NULL ELSE now() + make_interval(days => $5::int) END) RETURNING ${COLUMNS}`,
      [actor.userId, name, sha256Hex(token), tokenDisplayPrefix(token), expiresInDays ?? null],
    );
    return { ...toBoardTokenResponse(row), token };
  }

  async list(actor: BoardActor): Promise<BoardTokenResponseDto[]> {
    if (actor.source === 'local_implicit') return [];
    const rows = await this.db.query<BoardTokenRow>(
      `SELECT ${COLUMNS} FROM board_api_tokens WHERE user_id = $1 ORDER BY created_at DESC, id`,
      [actor.userId],
    );
    return rows.map(toBoardTokenResponse);
  }

  /** Only the owner revokes; another user's token id is not found. Revoking twice keeps the first time. */
  async revoke(actor: BoardActor, tokenId: string): Promise<BoardTokenResponseDto> {
    const [row] = isUuid(tokenId)
      ? await this.db.query<BoardTokenRow>(
          `WITH changed AS (UPDATE board_api_tokens SET revoked_at = coalesce(revoked_at, now()) WHERE id = $1 AND user_id = $2 RETURNING ${COLUMNS}) SELECT * FROM changed`,
          [tokenId, actor.userId],
        )
      : [];
    if (!row) throw notFound('Board token');
    return toBoardTokenResponse(row);
  }

  private assertUser(actor: BoardActor): void {
    if (actor.source === 'local_implicit') {
      throw conflict('Board tokens belong to signed-in users; the local trusted board needs none', 'user_required');
    }
  }
}
