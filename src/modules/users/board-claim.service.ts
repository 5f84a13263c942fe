import { Injectable, OnApplicationBootstrap } from '@nestjs/common';
import type { Actor } from '../../common/auth/actor';
import { generateToken, sha256Hex, tokenKind } from '../../common/auth/tokens';
import { conflict, DomainError, notFound } from '../../common/errors/domain-error';
import { AppConfig } from '../../config/app-config';
import { Db } from '../../database/db.service';
import { BoardClaimStatusDto } from './dto/auth.dto';
import { toUserResponse, UserResponseDto, UserRow } from './user.types';

interface ClaimRow {
  id: string;
  expires_at: Date;
  claimed_at: Date | null;
}

const CLAIM_VALIDITY_HOURS = 24;

/**
 * Board claim (spec, Authentication point 8): an authenticated instance without an owner prints a
 * one-time claim URL at start-up; the signed-in user who claims it becomes instance owner. Claims
 * are serialised by a transaction-scoped advisory lock, so only one ever succeeds per instance.
 */
@Injectable()
export class BoardClaimService implements OnApplicationBootstrap {
  /** the claim issued at start-up, announced by main.ts as the last start-up line */
  private startupClaimUrl?: string;

  constructor(
    private readonly db: Db,
    private readonly config: AppConfig,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    if (this.config.deploymentMode !== 'authenticated') return;
    const token = await this.issueIfUnowned();
    if (token) this.startupClaimUrl = `${this.config.publicUrl}/api/board-claim/${token}/claim`;
  }

  /**
   * The start-up notice of an unowned instance (once): the one place a secret is logged, by design,
   * since the operator needs it to take over the instance.
   */
  takeStartupNotice(): { message: string; claimUrl: string } | undefined {
    const claimUrl = this.startupClaimUrl;
    this.startupClaimUrl = undefined;
    if (!claimUrl) return undefined;
    return {
      claimUrl,
      message:
        `BOARD CLAIM: this instance has no owner. Sign in (or sign up), then claim it within ${CLAIM_VALIDITY_HOURS}h: ` +
        `POST ${claimUrl} (inspect with GET). The link works once.`,
    };
  }

  /** A fresh claim token when no instance owner or admin exists; undefined otherwise. */
  async issueIfUnowned(): Promise<string | undefined> {
    if (await this.hasOwner()) return undefined;
    const token = generateToken('bc');
    await this.db.query(`INSERT INTO board_claims (token_hash, expires_at) VALUES ($1, now() + make_interval(hours => $2))`, [
      sha256Hex(token),
      CLAIM_VALIDITY_HOURS,
    ]);
    return token;
  }

  async inspect(actor: Actor | undefined, token: string): Promise<BoardClaimStatusDto> {
    const row = await this.find(token);
    return {
      status: this.statusOf(row),
      expiresAt: new Date(row.expires_at).toISOString(),
      claimedAt: row.claimed_at ? new Date(row.claimed_at).toISOString() : null,
      signedIn: actor?.kind === 'board' && actor.source === 'session',
    };
  }

  /** The browser-authenticated (session) user becomes instance owner; the token then never works again. */
  async claim(actor: Actor, token: string): Promise<UserResponseDto> {
    if (actor.kind !== 'board' || actor.source !== 'session') {
      throw new DomainError(403, 'session_required', 'Claiming the instance needs a signed-in browser session');
    }
    await this.db.query(`SELECT pg_advisory_xact_lock(hashtext('board_claim'))`);
    const row = await this.find(token, true);
    const status = this.statusOf(row);
    if (status === 'claimed') throw conflict('This claim was already used', 'claim_used');
    if (status === 'expired') throw new DomainError(410, 'claim_expired', 'This claim has expired');
    if (await this.hasOwner()) throw conflict('This instance already has an owner', 'instance_owned');
    await this.db.query(`UPDATE board_claims SET claimed_at = now(), claimed_by_user_id = $2 WHERE id = $1`, [row.id, actor.userId]);
    const [user] = await this.db.query<UserRow>(
      `WITH changed AS (UPDATE users SET instance_role = 'owner', updated_at = now() WHERE id = $1 RETURNING *) SELECT * FROM changed`,
      [actor.userId],
    );
    return toUserResponse(user);
  }

  private statusOf(row: ClaimRow): 'pending' | 'claimed' | 'expired' {
    if (row.claimed_at) return 'claimed';
    return new Date(row.expires_at).getTime() <= Date.now() ? 'expired' : 'pending';
  }

  private async hasOwner(): Promise<boolean> {
    const rows = await this.db.query(`SELECT 1 FROM users WHERE instance_role IS NOT NULL LIMIT 1`);
    return rows.length > 0;
  }

  private async find(token: string, lock = false): Promise<ClaimRow> {
    if (tokenKind(token) !== 'bc') throw notFound('Board claim');
    const [row] = await this.db.query<ClaimRow>(
      `SELECT id, expires_at, claimed_at FROM board_claims WHERE token_hash = $1 ${lock ? 'FOR UPDATE' : ''}`,
      [sha256Hex(token)],
    );
    if (!row) throw notFound('Board claim');
    return row;
  }
}
