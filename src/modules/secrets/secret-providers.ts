import { Injectable } from '@nestjs/common';
import { AppConfig } from '../../config/app-config';
import { DomainError } from '../../common/errors/domain-error';
import { secretError } from './secrets.errors';
import { decryptValue, encryptValue, sha256OfValue, versionAad } from './secret-crypto';

export interface SecretProviderDescriptor {
  id: string;
  label: string;
  requiresExternalRef: boolean;
}

/** What a provider stores for one version. */
export interface StoredVersionMaterial {
  externalRef: string | null;
  ciphertext: Buffer | null;
  iv: Buffer | null;
  authTag: Buffer | null;
  keyFingerprint: string | null;
  valueSha256: string;
}

export interface StoredVersion extends StoredVersionMaterial {
  secretId: string;
  version: number;
}

export interface SecretProvider {
  readonly descriptor: SecretProviderDescriptor;
  /** undefined when usable; otherwise why not (operations are refused with 422) */
  unavailableReason(): string | undefined;
  store(input: { secretId: string; version: number; value: string | undefined; externalRef: string | null }): StoredVersionMaterial;
  resolve(stored: StoredVersion): string;
}

export const LOCAL_ENCRYPTED = 'local_encrypted';

/** Errors at resolution time carry stable codes; the heartbeat engine fails a run with them. */
export const SECRET_ERROR_CODES = {
  notFound: 'secret_not_found',
  versionNotFound: 'secret_version_not_found',
  masterKeyMismatch: 'secret_master_key_mismatch',
  decryptionFailed: 'secret_decryption_failed',
  providerNotConfigured: 'secret_provider_not_configured',
  externalRefUnresolvable: 'secret_external_ref_unresolvable',
} as const;

/** Encrypted at rest with the instance master key (AES-256-GCM). */
class LocalEncryptedProvider implements SecretProvider {
  readonly descriptor = { id: LOCAL_ENCRYPTED, label: 'Local encrypted (AES-256-GCM, instance master key)', requiresExternalRef: false };

  constructor(private readonly config: AppConfig) {}

  unavailableReason(): string | undefined {
    return undefined;
  }

  store(input: { secretId: string; version: number; value: string | undefined }): StoredVersionMaterial {
    if (typeof input.value !== 'string' || input.value === '') {
      throw new DomainError(400, 'validation_failed', 'value is required', {
        fields: [{ field: 'value', messages: ['value is required'] }],
      });
    }
    const enc = encryptValue(this.config.secretsMasterKey, input.value, versionAad(input.secretId, input.version));
    return { externalRef: null, ...enc, keyFingerprint: this.config.secretsMasterKeyFingerprint, valueSha256: sha256OfValue(input.value) };
  }

  resolve(stored: StoredVersion): string {
    const current = this.config.secretsMasterKeyFingerprint;
    if (stored.keyFingerprint && stored.keyFingerprint !== current) {
      throw secretError(
        SECRET_ERROR_CODES.masterKeyMismatch,
        `Secret version ${stored.version} was encrypted with the master key of fingerprint ${stored.keyFingerprint}, ` +
          `but this service runs with the master key of fingerprint ${current}; configure SERVICE_SECRETS_MASTER_KEY ` +
          `(or SERVICE_SECRETS_MASTER_KEY_FILE) with the original key`,
        { keyFingerprint: current, expectedKeyFingerprint: stored.keyFingerprint },
      );
    }
    try {
      return decryptValue(
        this.config.secretsMasterKey,
        { ciphertext: stored.ciphertext!, iv: stored.iv!, authTag: stored.authTag! },
        versionAad(stored.secretId, stored.version),
      );
    } catch {
      throw secretError(
        SECRET_ERROR_CODES.decryptionFailed,
        `Secret version ${stored.version} failed authentication with the master key of fingerprint ${current}: ` +
          `the stored ciphertext was altered or belongs to another key`,
        { keyFingerprint: current },
      );
    }
  }
}

/** Reads the value from the service's own environment variable named by `externalRef`; stores nothing secret. */
class EnvProvider implements SecretProvider {
  readonly descriptor = { id: 'env', label: 'Service environment variable', requiresExternalRef: true };

  constructor(private readonly env: NodeJS.ProcessEnv) {}

  unavailableReason(): string | undefined {
    return undefined;
  }

  store(input: { externalRef: string | null }): StoredVersionMaterial {
    const value = this.read(input.externalRef!);
    return {
      externalRef: input.externalRef,
      ciphertext: null,
      iv: null,
      authTag: null,
      keyFingerprint: null,
      valueSha256: sha256OfValue(value),
    };
  }

  resolve(stored: StoredVersion): string {
    return this.read(stored.externalRef ?? '');
  }

  private read(name: string): string {
    const value = this.env[name];
    if (value === undefined) {
      throw secretError(
        SECRET_ERROR_CODES.externalRefUnresolvable,
        `Environment variable ${name} named by externalRef is not set on the service`,
        {
          externalRef: name,
        },
      );
    }
    return value;
  }
}

/** External secret managers: listed so configurations can name them; refused until an integration is configured. */
class UnconfiguredExternalProvider implements SecretProvider {
  constructor(readonly descriptor: SecretProviderDescriptor) {}

  unavailableReason(): string {
    return `Secret provider ${this.descriptor.id} is not configured on this deployment`;
  }

  store(): never {
    throw secretError(SECRET_ERROR_CODES.providerNotConfigured, this.unavailableReason(), { provider: this.descriptor.id });
  }

  resolve(): never {
    return this.store();
  }
}

/** The provider registry: descriptors, the deployment default, and the checks every operation passes. */
@Injectable()
export class SecretProviders {
  private readonly providers: Map<string, SecretProvider>;

  constructor(private readonly config: AppConfig) {
    const list: SecretProvider[] = [
      new LocalEncryptedProvider(config),
      new EnvProvider(process.env),
      new UnconfiguredExternalProvider({ id: 'aws_secrets_manager', label: 'AWS Secrets Manager', requiresExternalRef: true }),
      new UnconfiguredExternalProvider({ id: 'gcp_secret_manager', label: 'Google Cloud Secret Manager', requiresExternalRef: true }),
      new UnconfiguredExternalProvider({ id: 'vault', label: 'HashiCorp Vault', requiresExternalRef: true }),
    ];
    this.providers = new Map(list.map((p) => [p.descriptor.id, p]));
  }

  descriptors(): SecretProviderDescriptor[] {
    return [...this.providers.values()].map((p) => ({ ...p.descriptor }));
  }

  /** A known, configured provider, or a 400 (unknown) / 422 (not configured). */
  usable(id: string): SecretProvider {
    const p = this.providers.get(id);
    if (!p) {
      throw secretError(
        'unknown_secret_provider',
        `Unknown secret provider "${id}"; known providers: ${[...this.providers.keys()].join(', ')}`,
        {
          provider: id,
        },
      );
    }
    const reason = p.unavailableReason();
    if (reason) throw secretError(SECRET_ERROR_CODES.providerNotConfigured, reason, { provider: id });
    return p;
  }

  /**
   * Provider for a create that names none: the deployment default when it is known, configured and
   * its external reference needs are met by the request; otherwise local_encrypted.
   */
  defaultFor(externalRef: string | null | undefined): string {
    const id = this.config.defaultSecretProvider;
    const p = id ? this.providers.get(id) : undefined;
    if (p && !p.unavailableReason() && (!p.descriptor.requiresExternalRef || !!externalRef)) return p.descriptor.id;
    return LOCAL_ENCRYPTED;
  }
}
