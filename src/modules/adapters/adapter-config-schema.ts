import { isUuid } from '../../common/http/uuid';
import type { SecretRef } from '../secrets/secret-ref';

/**
 * A small JSON-schema subset describing an adapter's configuration: enough to validate and
 * normalise `adapterConfig` on create/patch and to serve the settings form later
 * (GET /api/adapters/:type/config-schema). Unknown keys are kept: adapters evolve faster
 * than the service and the built-in agents and skills features store their own keys there.
 */
export type ConfigFieldSchema =
  | { type: 'string'; description?: string; minLength?: number; enum?: string[]; format?: 'url' | 'uri-or-ws' }
  | { type: 'integer'; description?: string; minimum?: number; maximum?: number }
  | { type: 'number'; description?: string; minimum?: number }
  | { type: 'boolean'; description?: string }
  | { type: 'string-array'; description?: string }
  | { type: 'string-map'; description?: string }
  | { type: 'object'; description?: string }
  | { type: 'env'; description?: string };

export interface AdapterConfigSchema {
  type: 'object';
  required?: string[];
  properties: Record<string, ConfigFieldSchema>;
}

/** Keys every built-in adapter's config may carry (runtime knobs shared by the heartbeat engine). */
export const COMMON_CONFIG_FIELDS: Record<string, ConfigFieldSchema> = {
  env: { type: 'env', description: 'environment variables: inline strings or secret references' },
  // the executors' rule: 0 = no limit (process, local runtimes) or the adapter's default (http, gateway_a)
  timeoutSec: { type: 'integer', minimum: 0, description: 'run time limit in seconds; 0 = none (http, gateway_a: their default)' },
  graceSec: { type: 'integer', minimum: 0, description: 'grace period after SIGTERM' },
  serviceSkillSync: { type: 'object', description: 'skills sync state; desiredSkills' },
};

/** A config value the schema refuses; `field` is the dotted path inside the request body. */
export class ConfigFieldError extends Error {
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(message);
  }
}

const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const REF_KEYS = ['type', 'secretId', 'version', 'delivery', 'projectionClass'];

/**
 * `env` values: inline values (string, number, boolean, null, or `{ type: "plain", value }`, kept as
 * the string) or secret references
 * `{ type: "secret_ref", secretId, version?, delivery?, projectionClass? }` (omitted version = latest).
 * Shape only: whether the secret exists in the company is the secrets feature's check.
 */
export function normalizeEnv(value: unknown, path: string): Record<string, unknown> {
  if (!isPlainObject(value)) throw new ConfigFieldError(path, `${path} must be an object of environment variables`);
  const out: Record<string, unknown> = {};
  for (const [name, v] of Object.entries(value)) {
    const at = `${path}.${name}`;
    if (!ENV_NAME.test(name)) throw new ConfigFieldError(at, `${at}: invalid environment variable name`);
    if (v === null || ['string', 'number', 'boolean'].includes(typeof v)) {
      out[name] = v;
      continue;
    }
    // the board UI's form sends inline values as { type: "plain", value }: stored as the string
    if (isPlainObject(v) && v.type === 'plain') {
      if (typeof v.value !== 'string') throw new ConfigFieldError(`${at}.value`, `${at}.value must be a string`);
      const extraKey = Object.keys(v).find((k) => k !== 'type' && k !== 'value');
      if (extraKey) throw new ConfigFieldError(`${at}.${extraKey}`, `${at}: unexpected key ${extraKey}`);
      out[name] = v.value;
      continue;
    }
    if (!isPlainObject(v) || v.type !== 'secret_ref') {
      throw new ConfigFieldError(at, `${at} must be a string, { type: "plain", value } or { type: "secret_ref", secretId, version }`);
    }
    if (!isUuid(v.secretId)) throw new ConfigFieldError(`${at}.secretId`, `${at}.secretId must be a secret id (UUID)`);
    const version = v.version ?? 'latest';
    if (version !== 'latest' && !(Number.isInteger(version) && (version as number) >= 1)) {
      throw new ConfigFieldError(`${at}.version`, `${at}.version must be "latest" or a positive integer`);
    }
    if (v.delivery !== undefined && !['env', 'api', 'both'].includes(v.delivery as string)) {
      throw new ConfigFieldError(`${at}.delivery`, `${at}.delivery must be env, api or both`);
    }
    if (v.projectionClass !== undefined && typeof v.projectionClass !== 'string') {
      throw new ConfigFieldError(`${at}.projectionClass`, `${at}.projectionClass must be a string`);
    }
    const extra = Object.keys(v).find((k) => !REF_KEYS.includes(k));
    if (extra) throw new ConfigFieldError(`${at}.${extra}`, `${at}: unexpected key ${extra}`);
    out[name] = { ...v, version };
  }
  return out;
}

/** Every secret reference of a config's `env`, with the variable name it is bound to. */
export function secretRefsOf(config: Record<string, unknown>): Array<SecretRef & { name: string }> {
  const env = config.env;
  if (!isPlainObject(env)) return [];
  return Object.entries(env)
    .filter(([, v]) => isPlainObject(v) && v.type === 'secret_ref')
    .map(([name, v]) => ({ ...(v as unknown as SecretRef), name }));
}

function checkField(value: unknown, schema: ConfigFieldSchema, path: string): unknown {
  switch (schema.type) {
    case 'string': {
      if (typeof value !== 'string') throw new ConfigFieldError(path, `${path} must be a string`);
      if (schema.minLength && value.trim().length < schema.minLength) throw new ConfigFieldError(path, `${path} must not be empty`);
      if (schema.enum && !schema.enum.includes(value)) throw new ConfigFieldError(path, `${path} must be one of ${schema.enum.join(', ')}`);
      if (schema.format) {
        const protocols = schema.format === 'url' ? ['http:', 'https:'] : ['http:', 'https:', 'ws:', 'wss:'];
        let ok = false;
        try {
          ok = protocols.includes(new URL(value).protocol);
        } catch {
          ok = false;
        }
        if (!ok) throw new ConfigFieldError(path, `${path} must be an ${protocols.map((p) => p.replace(':', '')).join('/')} URL`);
      }
      return value;
    }
    case 'integer':
      if (!Number.isInteger(value)) throw new ConfigFieldError(path, `${path} must be an integer`);
      if (schema.minimum !== undefined && (value as number) < schema.minimum)
        throw new ConfigFieldError(path, `${path} must be >= ${schema.minimum}`);
      if (schema.maximum !== undefined && (value as number) > schema.maximum)
        throw new ConfigFieldError(path, `${path} must be <= ${schema.maximum}`);
      return value;
    case 'number':
      if (typeof value !== 'number' || !Number.isFinite(value)) throw new ConfigFieldError(path, `${path} must be a number`);
      if (schema.minimum !== undefined && value < schema.minimum) throw new ConfigFieldError(path, `${path} must be >= ${schema.minimum}`);
      return value;
    case 'boolean':
      if (typeof value !== 'boolean') throw new ConfigFieldError(path, `${path} must be a boolean`);
      return value;
    case 'string-array':
      if (!Array.isArray(value) || !value.every((x) => typeof x === 'string'))
        throw new ConfigFieldError(path, `${path} must be an array of strings`);
      return value;
    case 'string-map':
      if (!isPlainObject(value) || !Object.values(value).every((x) => typeof x === 'string')) {
        throw new ConfigFieldError(path, `${path} must be an object of strings`);
      }
      return value;
    case 'object':
      if (!isPlainObject(value)) throw new ConfigFieldError(path, `${path} must be an object`);
      return value;
    case 'env':
      return normalizeEnv(value, path);
  }
}

/** Validates known keys (nulls are dropped), keeps unknown ones, checks required keys. */
export function validateAgainstSchema(config: unknown, schema: AdapterConfigSchema, path = 'adapterConfig'): Record<string, unknown> {
  if (!isPlainObject(config)) throw new ConfigFieldError(path, `${path} must be an object`);
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(config)) {
    const field = schema.properties[key];
    if (value === null && field) continue;
    out[key] = field ? checkField(value, field, `${path}.${key}`) : value;
  }
  for (const key of schema.required ?? []) {
    if (out[key] === undefined) throw new ConfigFieldError(`${path}.${key}`, `${path}.${key} is required for this adapter type`);
  }
  return out;
}
