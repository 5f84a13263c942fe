import { isUuid } from '../../common/http/uuid';

/**
 * The one shape of a secret reference: where a config holds a secret (an agent's or project's
 * `env`, a plugin's `x-secret` config field), it stores this, never the value. Agent and project
 * env entries may name how the secret reaches the run (`delivery`, `projectionClass`; see
 * secret-binding.ts); a plugin's instance config belongs to no company, so its references name the
 * secret's company (`companyId`).
 */
export interface SecretRef {
  type: 'secret_ref';
  secretId: string;
  /** omitted: the latest version */
  version?: 'latest' | number;
  /** how the secret reaches the run: env, api or both (agent and project env) */
  delivery?: 'env' | 'api' | 'both';
  projectionClass?: string;
  /** the company of the secret, where the holder is instance-wide (plugin config) */
  companyId?: string;
}

/** A secret reference: `{ type: "secret_ref", secretId }` with a string id (further keys unchecked). */
export const isSecretRef = (v: unknown): v is SecretRef =>
  !!v &&
  typeof v === 'object' &&
  !Array.isArray(v) &&
  (v as { type?: unknown }).type === 'secret_ref' &&
  typeof (v as { secretId?: unknown }).secretId === 'string';

/** A reference in a plugin's instance config: it names the secret's company, both ids UUIDs. */
export const isCompanySecretRef = (v: unknown): v is SecretRef & { companyId: string } =>
  isSecretRef(v) && isUuid(v.companyId) && isUuid(v.secretId);
