import { timingSafeEqual } from 'node:crypto';
import { isLoopbackHost } from '../../config/app-config';

/** `loopback`: allowed as a loopback caller (the caller must still not be an agent or plugin process). */
export type MetricsAccess = 'ok' | 'loopback' | 'token_required' | 'bad_token' | 'remote_refused';

/**
 * Who may scrape GET /api/metrics: with SERVICE_METRICS_TOKEN set, any caller presenting
 * `Authorization: Bearer <token>` (from anywhere); without it, loopback callers only, unless
 * SERVICE_METRICS_ALLOW_REMOTE=true.
 */
export function metricsAccess(
  settings: { token?: string; allowRemote: boolean },
  ip: string,
  authorization: string | undefined,
): MetricsAccess {
  if (settings.token) {
    const m = /^Bearer\s+(.+)$/i.exec(authorization ?? '');
    if (!m) return 'token_required';
    const given = Buffer.from(m[1].trim());
    const want = Buffer.from(settings.token);
    return given.length === want.length && timingSafeEqual(given, want) ? 'ok' : 'bad_token';
  }
  if (settings.allowRemote) return 'ok';
  const addr = ip.startsWith('::ffff:') ? ip.slice(7) : ip;
  return isLoopbackHost(addr) ? 'loopback' : 'remote_refused';
}
