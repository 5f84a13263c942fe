import { Injectable } from '@nestjs/common';
import type { BoardActor } from '../../common/auth/actor';
import { generateToken, sha256Hex, tokenDisplayPrefix } from '../../common/auth/tokens';
import { notFound } from '../../common/errors/domain-error';
import { isUuid } from '../../common/http/uuid';
import { BoardTokenResponseDto, CreatedBoardTokenDto } from './dto/auth.dto';
import { SessionsRepository } from './sessions.repository';
import { userError } from './users.errors';

/** Board API tokens for scripts: `svc_bt_` tokens acting as their user, shown once, stored hashed, revocable. */
@Injectable()
export class BoardTokensService {
  constructor(private readonly tokens: SessionsRepository) {}

  async create(actor: BoardActor, name: string, expiresInDays?: number): Promise<CreatedBoardTokenDto> {
    this.assertUser(actor);
    const token = generateToken('bt');
    const created = await this.tokens.insertBoardToken({
      userId: actor.userId,
      name,
      tokenHash: sha256Hex(token),
      tokenPrefix: tokenDisplayPrefix(token),
      expiresInDays: expiresInDays ?? null,
    });
    return { ...created, token };
  }

  async list(actor: BoardActor): Promise<BoardTokenResponseDto[]> {
    if (actor.source === 'local_implicit') return [];
    return this.tokens.listBoardTokens(actor.userId);
  }

  /** Only the owner revokes; another user's token id is not found. Revoking twice keeps the first time. */
  async revoke(actor: BoardActor, tokenId: string): Promise<BoardTokenResponseDto> {
    const revoked = isUuid(tokenId) ? await this.tokens.revokeBoardToken(tokenId, actor.userId) : undefined;
    if (!revoked) throw notFound('Board token');
    return revoked;
  }

  private assertUser(actor: BoardActor): void {
    if (actor.source === 'local_implicit') {
      throw userError('user_required', 'Board tokens belong to signed-in users; the local trusted board needs none');
    }
  }
}
