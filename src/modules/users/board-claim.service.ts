import { Injectable, OnApplicationBootstrap } from '@nestjs/common';
import type { Actor } from '../../common/auth/actor';
import { generateToken, sha256Hex, tokenKind } from '../../common/auth/tokens';
import { notFound } from '../../common/errors/domain-error';
import { AppConfig } from '../../config/app-config';
import { iso, isoRequired } from '../../database/row-mapping';
import { BoardClaimStatusDto } from './dto/auth.dto';
import { toUserResponse, UserResponseDto } from '../instance/user.types';
import { userError } from './users.errors';
import { ClaimRecord, UsersRepository } from './users.repository';

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
    private readonly users: UsersRepository,
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
    await this.users.insertClaim(sha256Hex(token), CLAIM_VALIDITY_HOURS);
    return token;
  }

  async inspect(actor: Actor | undefined, token: string): Promise<BoardClaimStatusDto> {
    const row = await this.find(token);
    return {
      status: this.statusOf(row),
      expiresAt: isoRequired(row.expiresAt),
      claimedAt: iso(row.claimedAt),
      signedIn: actor?.kind === 'board' && actor.source === 'session',
    };
  }

  /** The browser-authenticated (session) user becomes instance owner; the token then never works again. */
  async claim(actor: Actor, token: string): Promise<UserResponseDto> {
    if (actor.kind !== 'board' || actor.source !== 'session') {
      throw userError('session_required', 'Claiming the instance needs a signed-in browser session');
    }
    await this.users.lockClaims();
    const row = await this.find(token, true);
    const status = this.statusOf(row);
    if (status === 'claimed') throw userError('claim_used', 'This claim was already used');
    // 410 is not in the ErrorTable's statuses
    if (status === 'expired') throw userError('claim_expired', 'This claim has expired');
    if (await this.hasOwner()) throw userError('instance_owned', 'This instance already has an owner');
    await this.users.markClaimed(row.id, actor.userId);
    return toUserResponse(await this.users.makeOwner(actor.userId));
  }

  private statusOf(row: ClaimRecord): 'pending' | 'claimed' | 'expired' {
    if (row.claimedAt) return 'claimed';
    return new Date(row.expiresAt).getTime() <= Date.now() ? 'expired' : 'pending';
  }

  private hasOwner(): Promise<boolean> {
    return this.users.hasInstanceAdmin();
  }

  private async find(token: string, lock = false): Promise<ClaimRecord> {
    if (tokenKind(token) !== 'bc') throw notFound('Board claim');
    const row = await this.users.findClaim(sha256Hex(token), lock);
    if (!row) throw notFound('Board claim');
    return row;
  }
}
