import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { DomainError } from '../../common/errors/domain-error';
import { userError } from './users.errors';
import { UsersRepository } from './users.repository';

/**
 * Per (client IP, address): a handful of tries. Per address from any IP: more, so that a flood of
 * wrong passwords from one IP does not lock the owner out from another (attempts refused by the
 * first limit are not counted here), while guessing from many IPs is still bounded. Per client IP
 * across addresses: more again (shared offices, NAT).
 */
export const LOGIN_LIMITS = { perIpAndEmail: 5, perEmail: 50, perIp: 100, windowSec: 15 * 60 };

/**
 * Sign-in attempts are counted in the database (fixed windows), so every instance of the service
 * sees the same counts. Counting happens before the password is checked and before the request
 * transaction opens (see LoginRateLimitGuard): a failed sign-in rolls its transaction back, but its
 * attempt must stay counted; and a request holding its transaction connection must not wait for a
 * second one from the pool.
 */
@Injectable()
export class LoginRateLimiter {
  constructor(private readonly attempts: UsersRepository) {}

  /**
   * Counts an attempt for (IP, address) and the IP, then, when neither is over its limit, for the
   * address; 429 once any is over its limit. Each count is one atomic upsert, so concurrent
   * attempts are counted exactly.
   */
  async hit(email: string, ip: string): Promise<void> {
    const local = await this.attempts.countAttempts([`ipemail:${ip}:${email}`, `ip:${ip}`], LOGIN_LIMITS.windowSec);
    this.refuseOver(local.filter((r) => r.attempts > (r.key.startsWith('ip:') ? LOGIN_LIMITS.perIp : LOGIN_LIMITS.perIpAndEmail)));
    const global = await this.attempts.countAttempts([`email:${email}`], LOGIN_LIMITS.windowSec);
    this.refuseOver(global.filter((r) => r.attempts > LOGIN_LIMITS.perEmail));
  }

  /** A successful sign-in (in its transaction) clears the address's counts and takes its attempt back from the IP's. */
  async succeeded(email: string, ip: string): Promise<void> {
    await this.attempts.deleteAttempts([`email:${email}`, `ipemail:${ip}:${email}`]);
    await this.attempts.takeBackAttempt(`ip:${ip}`);
  }

  private refuseOver(over: Array<{ retryAfter: number }>): void {
    if (!over.length) return;
    const retryAfterSec = Math.max(1, ...over.map((r) => r.retryAfter));
    throw userError('too_many_attempts', 'Too many sign-in attempts; try again later', { retryAfterSec });
  }
}

export const normalizeEmail = (email: string) => email.trim().toLowerCase();
/** The client address: the socket's, or the proxy header's when SERVICE_TRUST_PROXY trusts the proxy (Fastify's trustProxy). */
export const clientIp = (req: FastifyRequest) => req.ip ?? 'unknown';

/** Route guard of sign-in: guards run before the transaction interceptor, so the count commits on its own. */
@Injectable()
export class LoginRateLimitGuard implements CanActivate {
  constructor(private readonly limiter: LoginRateLimiter) {}

  async canActivate(ctx: ExecutionContext): Promise<boolean> {
    const req = ctx.switchToHttp().getRequest<FastifyRequest>();
    const email = (req.body as { email?: unknown } | undefined)?.email;
    // a malformed body (or an address too long to be one) is the validation pipe's to reject
    if (typeof email !== 'string' || email.length > 254) return true;
    try {
      await this.limiter.hit(normalizeEmail(email), clientIp(req));
    } catch (err) {
      if (err instanceof DomainError && err.status === 429) {
        ctx.switchToHttp().getResponse<FastifyReply>().header('Retry-After', String(err.extra.retryAfterSec));
      }
      throw err;
    }
    return true;
  }
}
