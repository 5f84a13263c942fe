import { Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { AppConfig } from '../../config/app-config';
import { SecretsRepository } from './secrets.repository';

/**
 * At start: stored secrets this instance cannot decrypt (encrypted under another master key, e.g.
 * after a restore or a lost key file) are a warning line that names the keys, so the operator
 * learns it before the first run fails with secret_master_key_mismatch.
 */
@Injectable()
export class SecretsKeyCheck implements OnApplicationBootstrap {
  private readonly logger = new Logger('Secrets');

  constructor(
    private readonly repo: SecretsRepository,
    private readonly config: AppConfig,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    try {
      const foreign = await this.repo.foreignKeyVersions(this.config.secretsMasterKeyFingerprint);
      if (foreign.length === 0) return;
      const versions = foreign.reduce((n, f) => n + f.versions, 0);
      this.logger.warn(
        {
          secretVersions: versions,
          keyFingerprints: foreign.map((f) => f.fingerprint),
          configuredKeyFingerprint: this.config.secretsMasterKeyFingerprint,
        },
        `${versions} stored secret versions (${foreign.map((f) => `${f.versions} in ${f.companies} companies under key ${f.fingerprint}`).join('; ')}) ` +
          `were encrypted with another master key than this one (${this.config.secretsMasterKeyFingerprint}) and cannot be decrypted: ` +
          'configure the original key (SERVICE_SECRETS_MASTER_KEY, SERVICE_SECRETS_MASTER_KEY_FILE or <data dir>/keys/secrets-master-key)',
      );
    } catch (err) {
      this.logger.warn(`the stored secrets could not be checked against the master key: ${(err as Error).message}`);
    }
  }
}
