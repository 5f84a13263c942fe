import { createHmac } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { AppConfig } from '../../config/app-config';
import { safeEqual } from '../../common/auth/tokens';

export interface RunTokenClaims {
  agentId: string;
  companyId: string;
  runId: string;
}

const b64 = (v: string | Buffer) => Buffer.from(v).toString('base64url');
const HEADER = b64(JSON.stringify({ alg: 'HS256', typ: 'JWT' }));
const AUDIENCE = 'service:run';

/**
 * Run tokens: compact HS256 JWTs naming agent (`sub`), company and run, signed with the instance's
 * JWT secret. The signature only proves who issued it: the resolver accepts a token only while
 * its run is queued or running, so a token dies with its run whatever its `exp`.
 *
 * Signing is done with node:crypto rather than `jose`: jose 6 is ESM-only and cannot be loaded by
 * Jest on Node 20; the wire format is the same standard JWT.
 */
@Injectable()
export class RunTokenService {
  constructor(private readonly config: AppConfig) {}

  issue(claims: RunTokenClaims, ttlSec = 7 * 24 * 3600): string {
    const now = Math.floor(Date.now() / 1000);
    const payload = b64(
      JSON.stringify({ sub: claims.agentId, cid: claims.companyId, rid: claims.runId, aud: AUDIENCE, iat: now, exp: now + ttlSec }),
    );
    return `${HEADER}.${payload}.${this.sign(`${HEADER}.${payload}`)}`;
  }

  /** Claims of a well-formed, correctly signed, unexpired token; null otherwise. */
  verify(token: string): RunTokenClaims | null {
    const parts = token.split('.');
    if (parts.length !== 3) return null;
    const [h, p, s] = parts;
    if (!safeEqual(this.sign(`${h}.${p}`), s)) return null;
    try {
      const header = JSON.parse(Buffer.from(h, 'base64url').toString('utf8')) as { alg?: string };
      if (header.alg !== 'HS256') return null;
      const c = JSON.parse(Buffer.from(p, 'base64url').toString('utf8')) as Record<string, unknown>;
      if (c.aud !== AUDIENCE || typeof c.exp !== 'number' || c.exp < Date.now() / 1000) return null;
      if (typeof c.sub !== 'string' || typeof c.cid !== 'string' || typeof c.rid !== 'string') return null;
      return { agentId: c.sub, companyId: c.cid, runId: c.rid };
    } catch {
      return null;
    }
  }

  /** Looks like a JWT (so other resolvers can pass on it). */
  static looksLikeJwt(token: string): boolean {
    return /^eyJ[A-Za-z0-9_-]*\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/.test(token);
  }

  private sign(input: string): string {
    return createHmac('sha256', Buffer.from(this.config.jwtSecret)).update(input).digest('base64url');
  }
}
