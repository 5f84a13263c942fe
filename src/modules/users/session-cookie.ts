import type { FastifyReply, FastifyRequest } from 'fastify';

export const SESSION_COOKIE = 'svc_session';

/** The session token from the Cookie header (parsed by @fastify/cookie). */
export function sessionCookie(req: FastifyRequest): string | undefined {
  return req.cookies?.[SESSION_COOKIE] || undefined;
}

/** HttpOnly, SameSite=Lax (no cross-site POSTs carry it), Secure when the public URL is https. */
export function setSessionCookie(res: FastifyReply, token: string, expiresAt: Date, secure: boolean): void {
  res.setCookie(SESSION_COOKIE, token, { httpOnly: true, sameSite: 'lax', secure, path: '/', expires: expiresAt });
}

export function clearSessionCookie(res: FastifyReply, secure: boolean): void {
  res.clearCookie(SESSION_COOKIE, { httpOnly: true, sameSite: 'lax', secure, path: '/' });
}
