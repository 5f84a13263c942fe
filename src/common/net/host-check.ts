const LOOPBACK_NAMES = new Set(['localhost', '127.0.0.1', '[::1]', '::1']);

/** The host name of a Host header or an origin, lower case, without the port. */
function hostName(value: string): string | null {
  try {
    return new URL(value.includes('://') ? value : `http://${value}`).hostname.toLowerCase();
  } catch {
    return null;
  }
}

/**
 * Why a request without credentials (the local board) is refused, or null: its Host, and its
 * Origin when sent, must name this machine (loopback) or the service's public URL. A web page
 * whose name an attacker points at 127.0.0.1 (DNS rebinding) cannot act as the local board
 * through the browser of a person on this machine (the API, its live events and /api/mcp alike).
 */
export function hostRefusal(host: string | undefined, origin: string | undefined, publicUrl: string | undefined): string | null {
  const own = publicUrl ? hostName(publicUrl) : null;
  const ok = (name: string | null) => name !== null && (LOOPBACK_NAMES.has(name) || name === own);
  if (!host || !ok(hostName(host))) return 'The Host header does not name this machine: refused (DNS rebinding protection)';
  if (origin !== undefined && origin !== 'null' && !ok(hostName(origin)))
    return 'The Origin is not this machine: refused (DNS rebinding protection)';
  if (origin === 'null') return 'An opaque Origin is refused (DNS rebinding protection)';
  return null;
}
