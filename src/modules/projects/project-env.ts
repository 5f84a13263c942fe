import { isUuid } from '../../common/http/uuid';
import { projectError } from './projects.errors';

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * Project env: variable name -> inline string, or `{ type: "secret_ref", secretId, version? }`
 * (`version`: "latest" or a positive integer; omitted means latest). Stored as given; the secrets
 * module normalises bindings once it exists.
 */
export function assertProjectEnv(env: Record<string, unknown>): Record<string, unknown> {
  for (const [name, value] of Object.entries(env)) {
    const field = `env.${name}`;
    if (!ENV_NAME.test(name)) throw projectError('invalid_env', `${field}: not a valid environment variable name`, { field });
    if (typeof value === 'string') continue;
    if (value && typeof value === 'object' && !Array.isArray(value)) {
      const ref = value as Record<string, unknown>;
      const extra = Object.keys(ref).filter((k) => !['type', 'secretId', 'version'].includes(k));
      const versionOk =
        ref.version === undefined || ref.version === 'latest' || (Number.isInteger(ref.version) && (ref.version as number) >= 1);
      if (ref.type === 'secret_ref' && isUuid(ref.secretId) && versionOk && !extra.length) continue;
    }
    throw projectError(
      'invalid_env',
      `${field} must be a string or { type: "secret_ref", secretId: <uuid>, version?: "latest" | <positive integer> }`,
      { field },
    );
  }
  return env;
}
