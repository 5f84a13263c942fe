const SENSITIVE_KEY =
  /^(password|passwd|pwd|token|secret|value|plaintext|apikey|api_key|authorization|cookie|set-cookie|keyhash|tokenhash|hash|privatekey|private_key|claimsecret|sessiontoken|credentials?)$/i;
const SENSITIVE_SUFFIX = /(token|password|secret|apikey|api_key|privatekey|private_key|hash)$/i;
/** Our own credential formats: agent and board keys, run tokens (JWT). */
const TOKEN_VALUE = /^(svc_[a-z]+_[A-Za-z0-9_-]{20,}|eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+)$/;

export const REDACTED = '[redacted]';

export function isSensitiveKey(key: string): boolean {
  return SENSITIVE_KEY.test(key) || SENSITIVE_SUFFIX.test(key);
}

/**
 * Copy of an activity details object with secret values, tokens and key material replaced.
 * Secret references (`{ type: "secret_ref", secretId }`) stay: they are not secret.
 */
export function sanitizeDetails(input: unknown, depth = 0): unknown {
  if (depth > 8) return REDACTED;
  if (input === null || input === undefined) return input;
  if (typeof input === 'string') return TOKEN_VALUE.test(input) ? REDACTED : input.length > 4000 ? input.slice(0, 4000) + '…' : input;
  if (typeof input !== 'object') return input;
  if (Array.isArray(input)) return input.slice(0, 200).map((v) => sanitizeDetails(v, depth + 1));
  if (input instanceof Date) return input.toISOString();
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(input as Record<string, unknown>)) {
    if (
      isSensitiveKey(k) &&
      !(v !== null && typeof v === 'object' && !Array.isArray(v) && (v as { type?: unknown }).type === 'secret_ref')
    ) {
      out[k] = v === null || v === undefined ? v : REDACTED;
    } else if (k === 'env' && v && typeof v === 'object' && !Array.isArray(v)) {
      // environment maps hold inline values that may be credentials: keep names and references only
      out[k] = Object.fromEntries(
        Object.entries(v as Record<string, unknown>).map(([name, val]) => [
          name,
          val && typeof val === 'object' ? sanitizeDetails(val, depth + 2) : REDACTED,
        ]),
      );
    } else {
      out[k] = sanitizeDetails(v, depth + 1);
    }
  }
  return out;
}
