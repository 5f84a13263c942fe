import { DomainError } from '../../common/errors/domain-error';
import type { SecretRef } from './secret-ref';

/**
 * Env binding config (agent `adapterConfig.env`, project `env`): each entry maps an environment
 * variable name to an inline value or a secret reference
 *   { type: "secret_ref", secretId, version?: "latest" | n, delivery?: "env"|"api"|"both", projectionClass? }
 * The variable name is the binding's alias (`key`) in the run-bound routes.
 */
export const DELIVERIES = ['env', 'api', 'both'] as const;
export type Delivery = (typeof DELIVERIES)[number];

/**
 * What kind of value a binding carries, so an agent knows how to use it without seeing it:
 * api_key, token, password, connection_string, certificate, generic. Inferred from the alias when
 * omitted. Every class is handled the same way for safety (never logged, redacted from run logs).
 */
export const PROJECTION_CLASSES = ['api_key', 'token', 'password', 'connection_string', 'certificate', 'generic'] as const;
export type ProjectionClass = (typeof PROJECTION_CLASSES)[number];

/** Omitted delivery: both, so a bound secret reaches the process and stays readable on demand. */
export const DEFAULT_DELIVERY: Delivery = 'both';

export type VersionSelector = 'latest' | number;

export interface SecretBinding {
  key: string;
  secretId: string;
  versionSelector: VersionSelector;
  delivery: Delivery;
  projectionClass: ProjectionClass;
}

/** A secret reference of an env binding as stored: every choice made explicit. */
export type NormalizedSecretRef = SecretRef & {
  version: VersionSelector;
  delivery: Delivery;
  projectionClass: ProjectionClass;
};

export type EnvEntry = string | number | boolean | null | NormalizedSecretRef;

export interface ParsedEnv {
  /** the env map as it should be stored */
  normalized: Record<string, EnvEntry>;
  bindings: SecretBinding[];
  /** inline (non-reference) values by variable name */
  inline: Record<string, string>;
}

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** *_KEY, *_TOKEN, *_SECRET (and the bare words), anything with PASSWORD */
const SENSITIVE_ENV_KEY = /(^|_)(KEY|TOKEN|SECRET)$|PASSWORD|PASSWD/i;

export const looksSensitive = (name: string) => SENSITIVE_ENV_KEY.test(name);

export function inferProjectionClass(key: string): ProjectionClass {
  const k = key.toUpperCase();
  if (/PASSWORD|PASSWD/.test(k)) return 'password';
  if (/(^|_)(API_?KEY|KEY)$/.test(k)) return 'api_key';
  if (/(^|_)(TOKEN|JWT|PAT)$/.test(k)) return 'token';
  if (/(^|_)(URL|URI|DSN|CONNECTION_STRING)$/.test(k)) return 'connection_string';
  if (/(^|_)(CERT|CERTIFICATE|PEM|PRIVATE_KEY)$/.test(k)) return 'certificate';
  return 'generic';
}

export const isSecretRefShape = (v: unknown): v is Record<string, unknown> =>
  !!v && typeof v === 'object' && !Array.isArray(v) && (v as { type?: unknown }).type === 'secret_ref';

export function invalidField(field: string, message: string, status = 400, code = 'validation_failed'): DomainError {
  return new DomainError(status, code, `${field}: ${message}`, { field, fields: [{ field, messages: [message] }] });
}

/** Shape checks and normalisation only; whether the referenced secrets exist is checked by the service. */
export function parseEnv(env: unknown, field: string, lenient = false): ParsedEnv {
  const out: ParsedEnv = { normalized: {}, bindings: [], inline: {} };
  if (env === undefined || env === null) return out;
  if (typeof env !== 'object' || Array.isArray(env)) {
    if (lenient) return out;
    throw invalidField(field, 'must be an object of environment variable names to values or secret references');
  }
  for (const [key, raw] of Object.entries(env as Record<string, unknown>)) {
    try {
      parseEntry(out, key, raw, `${field}.${key}`);
    } catch (err) {
      if (!lenient) throw err;
    }
  }
  return out;
}

function parseEntry(out: ParsedEnv, key: string, raw: unknown, f: string): void {
  if (raw === null || typeof raw === 'string' || typeof raw === 'number' || typeof raw === 'boolean') {
    out.normalized[key] = raw;
    if (raw !== null) out.inline[key] = String(raw);
    return;
  }
  if (raw && typeof raw === 'object' && !Array.isArray(raw) && (raw as { type?: unknown }).type === 'plain') {
    const value = (raw as { value?: unknown }).value;
    if (typeof value !== 'string') throw invalidField(f, 'a plain entry needs a string value');
    out.normalized[key] = value;
    out.inline[key] = value;
    return;
  }
  if (!isSecretRefShape(raw)) throw invalidField(f, 'must be a string or { type: "secret_ref", secretId, version }');
  if (!ENV_NAME.test(key)) throw invalidField(f, 'a secret binding alias must be an environment variable name ([A-Za-z_][A-Za-z0-9_]*)');
  const binding = parseRef(raw, f, key);
  out.bindings.push(binding);
  out.normalized[key] = {
    type: 'secret_ref',
    secretId: binding.secretId,
    version: binding.versionSelector,
    delivery: binding.delivery,
    projectionClass: binding.projectionClass,
  };
}

function parseRef(raw: Record<string, unknown>, field: string, key: string): SecretBinding {
  const allowed = new Set(['type', 'secretId', 'version', 'delivery', 'projectionClass']);
  const extra = Object.keys(raw).filter((k) => !allowed.has(k));
  if (extra.length) throw invalidField(field, `unknown secret reference field(s): ${extra.join(', ')}`);
  if (typeof raw.secretId !== 'string' || raw.secretId === '') throw invalidField(`${field}.secretId`, 'secretId is required');
  const v = raw.version;
  let versionSelector: VersionSelector;
  if (v === undefined || v === null || v === 'latest') versionSelector = 'latest';
  else if (typeof v === 'number' && Number.isInteger(v) && v >= 1) versionSelector = v;
  else throw invalidField(`${field}.version`, 'version must be "latest" or a positive integer');
  const delivery = raw.delivery ?? DEFAULT_DELIVERY;
  if (!DELIVERIES.includes(delivery as Delivery))
    throw invalidField(`${field}.delivery`, `delivery must be one of ${DELIVERIES.join(', ')}`);
  const projectionClass = raw.projectionClass ?? inferProjectionClass(key);
  if (!PROJECTION_CLASSES.includes(projectionClass as ProjectionClass)) {
    throw invalidField(`${field}.projectionClass`, `projectionClass must be one of ${PROJECTION_CLASSES.join(', ')}`);
  }
  return {
    key,
    secretId: raw.secretId,
    versionSelector,
    delivery: delivery as Delivery,
    projectionClass: projectionClass as ProjectionClass,
  };
}

/** Stored env config is read leniently: an entry that no longer parses yields no binding rather than an error. */
export const parseStoredEnv = (env: unknown): ParsedEnv => parseEnv(env, 'env', true);

/**
 * Aliases whose secret binding is new or points elsewhere after a change (another secret, version
 * or delivery): what needs the right to bind secrets. Removed bindings and unchanged ones do not.
 */
export function changedBindingKeys(before: unknown, after: unknown): string[] {
  const sig = (b: SecretBinding) => `${b.secretId}|${b.versionSelector}|${b.delivery}`;
  const old = new Map(parseStoredEnv(before).bindings.map((b) => [b.key, sig(b)]));
  return parseStoredEnv(after)
    .bindings.filter((b) => old.get(b.key) !== sig(b))
    .map((b) => b.key);
}

/** Low-trust review agents (metadata `trustLevel: "low"` or `reviewOnly: true`, or role `reviewer`) get no secrets, by env or API. */
export function isLowTrustAgent(agent: { role: string; metadata: Record<string, unknown> | null }): boolean {
  const m = agent.metadata ?? {};
  return m.trustLevel === 'low' || m.reviewOnly === true || agent.role === 'reviewer';
}

export const REDACTION = '[redacted]';
/** Values shorter than this are not redacted: replacing "1" everywhere would ruin a log without protecting anything. */
export const MIN_REDACTABLE_LENGTH = 4;

/** Replaces every occurrence of each value in a log chunk; longest first so overlapping values redact fully. */
export function redactValues(text: string, values: readonly string[]): string {
  let out = text;
  for (const v of [...values].filter((x) => x.length >= MIN_REDACTABLE_LENGTH).sort((a, b) => b.length - a.length)) {
    out = out.split(v).join(REDACTION);
  }
  return out;
}
