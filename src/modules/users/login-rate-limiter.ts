import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { DomainError } from '../../common/errors/domain-error';
import { Db } from '../../database/db.service';

/** per address: a handful of tries; per client IP: more (shared offices, NAT) */
export const LOGIN_LIMITS = { perEmail: 5, perIp: 100, windowSec: 15 * 60 };

/**
 * Sign-in attempts are counted in the database (fixed windows), so every instance of the service
 * sees the same counts. Counting happens before the password is checked and before the request
 * transaction opens (see LoginRateLimitGuard): a failed sign-in rolls its transaction back, but its
 * attempt must stay counted; and a request holding its transaction connection must not wait for a
 * second one from the pool.
 */
@Injectable()
export class LoginRateLimiter {
  constructor(private readonly db: Db) {}

  /** Counts an attempt for the address and the IP; 429 once either is over its limit. */
  async hit(email: string, ip: string): Promise<void> {
    const keys = [`email:${email}`, `ip:${ip}`];
    const rows = await this.db.dataSource.query(
      `INSERT INTO auth_rate_limits AS l (key, attempts, window_start)
       SELECT k, 1, now() FROM unnest($1::text[]) AS k
       ON CONFLICT (key) DO UPDATE SET
         attempts = CASE WHEN l.window_start < now() - make_interval(secs => $2) THEN 1 ELSE l.attempts + 1 END,
         window_start = CASE WHEN l.window_start < now() - make_interval(secs => $2) THEN now() ELSE l.window_start END
       RETURNING key, attempts, ceil(extract(epoch FROM l.window_start + make_interval(secs => $2) - now()))::int AS retry_after`,
      [keys, LOGIN_LIMITS.windowSec],
    ) as Array<{ key: string; attempts: number; retry_after: number }>;
    const over = rows.filter((r) => r.attempts > (r.key.startsWith('email:') ? LOGIN_LIMITS.perEmail : LOGIN_LIMITS.perIp));
    if (over.length) {
      const retryAfterSec = Math.max(1, ...over.map((r) => r.retry_after));
      throw new DomainError(429, 'too_many_attempts', 'Too many sign-in attempts; try again later', { retryAfterSec });
    }
  }

  /** A successful sign-in (in its transaction) clears the address's count and takes its attempt back from the IP's. */
  async succeeded(email: string, ip: string): Promise<void> {
    await this.db.query(`DELETE FROM auth_rate_limits WHERE key = $1`, [`email:${email}`]);
    await this.db.query(`UPDATE auth_rate_limits SET attempts = greatest(attempts - 1, 0) WHERE key = $1`, [`ip:${ip}`]);
  }
}

export const normalizeEmail = (email: string) => email.trim().toLowerCase();
export const clientIp = (req: FastifyRequest) => req.ip ?? 'unknown';

/** Route guard of sign-in: guards run before the transaction interceptor, so the count commits on its own. */
@Injectable()
export class LoginRateLimitGuard implements CanActivate {
  constructor(private readonly limiter: LoginRateLimiter) {}

  async canActivate(ctx: ExecutionContext): Promise<boolean> {
    const req = ctx.switchToHttp().getRequest<FastifyRequest>();
    const email = (req.body as { email?: unknown } | undefined)?.email;
    // a malformed body is the validation pipe's to reject
    if (typeof email !== 'string') return true;
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
