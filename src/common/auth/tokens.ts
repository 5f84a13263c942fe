import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/** Token kinds: `ak` agent API key, `bt` board API token, `ss` session, `cs` claim secret, `iv` invite. */
export type TokenKind = 'ak' | 'bt' | 'ss' | 'cs' | 'iv' | 'bc';

export const TOKEN_PREFIX = 'svc_';

/** A product prefix, the kind, then 32 random bytes (base64url). */
export function generateToken(kind: TokenKind): string {
  return `${TOKEN_PREFIX}${kind}_${randomBytes(32).toString('base64url')}`;
}

export function tokenKind(token: string): TokenKind | undefined {
  const m = /^svc_([a-z]{2})_[A-Za-z0-9_-]{43}$/.exec(token);
  return m ? (m[1] as TokenKind) : undefined;
}

export function sha256Hex(value: string): string {
  return createHash('sha256').update(value, 'utf8').digest('hex');
}

/** Constant-time comparison of two strings (e.g. hashes). */
export function safeEqual(a: string, b: string): boolean {
  const ba = Buffer.from(a);
  const bb = Buffer.from(b);
  if (ba.length !== bb.length) {
    timingSafeEqual(ba, ba);
    return false;
  }
  return timingSafeEqual(ba, bb);
}

/** What may be shown of a token after creation: its kind prefix and a few characters. */
export const tokenDisplayPrefix = (token: string) => token.slice(0, 12);
