import { Injectable } from '@nestjs/common';
import { AppConfig } from '../../config/app-config';
import type { ProviderConfigHealthCheckDto, SecretProviderConfigDto, SecretProviderHealthDto } from './dto/secret-provider.dto';
import { decryptValue, encryptValue } from './secret-crypto';
import { LOCAL_ENCRYPTED, SecretProviders } from './secret-providers';
import { SecretHealthRepository } from './secret-health.repository';

const KEY_BACKUP = [
  'Back up the secrets master key together with the database backups: the database alone cannot restore local encrypted values.',
  'Its fingerprint is shown here; a restore needs the key of the same fingerprint.',
];

/**
 * Whether each secret provider works for this company now: the local encrypted provider encrypts
 * and decrypts a probe with the instance master key and counts stored values under another key;
 * the env provider checks that the variables the company's secrets name are set; external
 * managers are listed as not configured.
 */
@Injectable()
export class SecretHealthService {
  constructor(
    private readonly providers: SecretProviders,
    private readonly config: AppConfig,
    private readonly repo: SecretHealthRepository,
  ) {}

  async health(companyId: string): Promise<SecretProviderHealthDto[]> {
    return Promise.all(this.providers.descriptors().map((d) => this.check(companyId, d.id)));
  }

  async check(companyId: string | null, provider: string): Promise<SecretProviderHealthDto> {
    if (provider === LOCAL_ENCRYPTED) return this.localHealth(companyId);
    if (provider === 'env') return this.envHealth(companyId);
    let reason: string | undefined;
    try {
      this.providers.usable(provider);
    } catch (err) {
      reason = (err as Error).message;
    }
    return {
      provider,
      status: reason ? 'warn' : 'ok',
      message: reason ?? `${provider} is configured`,
      warnings: reason ? [reason] : [],
      backupGuidance: [],
      details: { configured: !reason },
    };
  }

  /** Each provider as a read-only vault configuration of the company, with its health. */
  async configs(companyId: string): Promise<SecretProviderConfigDto[]> {
    const def = this.providers.defaultFor(undefined);
    const checkedAt = new Date().toISOString();
    return Promise.all(
      this.providers.descriptors().map(async (d) => {
        const h = await this.check(companyId, d.id);
        return {
          id: d.id,
          companyId,
          provider: d.id,
          displayName: d.label,
          status: h.details.configured === false ? ('unavailable' as const) : ('ready' as const),
          isDefault: d.id === def,
          builtIn: true,
          config: {},
          healthStatus: h.status,
          healthCheckedAt: checkedAt,
          healthMessage: h.message,
          healthDetails: h.details,
          disabledAt: null,
        };
      }),
    );
  }

  async checkConfig(companyId: string | null, provider: string): Promise<ProviderConfigHealthCheckDto> {
    const h = await this.check(companyId, provider);
    return { configId: provider, provider, status: h.status, message: h.message, details: h.details, checkedAt: new Date().toISOString() };
  }

  private async localHealth(companyId: string | null): Promise<SecretProviderHealthDto> {
    const fingerprint = this.config.secretsMasterKeyFingerprint;
    const source = process.env.SERVICE_SECRETS_MASTER_KEY ? 'env' : process.env.SERVICE_SECRETS_MASTER_KEY_FILE ? 'file' : 'data_directory';
    const details = { configured: true, keyFingerprint: fingerprint, keySource: source };
    try {
      const probe = `health-${Date.now()}`;
      const enc = encryptValue(this.config.secretsMasterKey, probe, 'health-probe');
      if (decryptValue(this.config.secretsMasterKey, enc, 'health-probe') !== probe) throw new Error('the probe did not decrypt to itself');
    } catch (err) {
      return {
        provider: LOCAL_ENCRYPTED,
        status: 'error',
        message: `The master key cannot encrypt: ${(err as Error).message}`,
        warnings: [],
        backupGuidance: KEY_BACKUP,
        details,
      };
    }
    const foreign = companyId ? await this.repo.foreignKeyCount(companyId, fingerprint) : 0;
    const warnings = foreign
      ? [
          `${foreign} stored value${foreign === 1 ? ' was' : 's were'} encrypted with another master key and cannot be decrypted; configure the original key`,
        ]
      : [];
    return {
      provider: LOCAL_ENCRYPTED,
      status: foreign ? 'warn' : 'ok',
      message: foreign ? warnings[0] : `Local encrypted provider ready (master key ${fingerprint}, from ${source.replace('_', ' ')})`,
      warnings,
      backupGuidance: KEY_BACKUP,
      details: { ...details, valuesUnderAnotherKey: foreign },
    };
  }

  private async envHealth(companyId: string | null): Promise<SecretProviderHealthDto> {
    const missing = (companyId ? await this.repo.envRefs(companyId) : []).filter((r) => process.env[r.externalRef] === undefined);
    const warnings = missing.map((m) => `Secret "${m.name}" reads ${m.externalRef}, which is not set on the service`);
    return {
      provider: 'env',
      status: missing.length ? 'warn' : 'ok',
      message: missing.length
        ? `${missing.length} secret(s) name unset environment variables`
        : 'Environment variables of the service: readable',
      warnings,
      backupGuidance: ['Values stay in the service environment; back up the deployment configuration that sets them.'],
      details: { configured: true, unsetVariables: missing.length },
    };
  }
}
