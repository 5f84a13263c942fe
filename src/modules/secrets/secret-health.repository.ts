import { Injectable } from '@nestjs/common';
import { CompanyScopedRepository } from '../../database/company-scoped.repository';
import { Db } from '../../database/db.service';

/** What the provider health check reads of the company's stored secrets. */
@Injectable()
export class SecretHealthRepository extends CompanyScopedRepository {
  constructor(db: Db) {
    super(db);
  }

  /** Encrypted values of the company (secret versions, user secrets, proposal values) stored under another master key than `fingerprint`. */
  async foreignKeyCount(companyId: string, fingerprint: string): Promise<number> {
    const row = await this.row<{ n: number }>(
      companyId,
      `SELECT (SELECT count(*) FROM company_secret_versions WHERE company_id = $1 AND key_fingerprint IS NOT NULL AND key_fingerprint <> $2)
            + (SELECT count(*) FROM user_secret_values WHERE company_id = $1 AND key_fingerprint <> $2)
            + (SELECT count(*) FROM secret_proposals WHERE company_id = $1 AND key_fingerprint IS NOT NULL AND key_fingerprint <> $2) AS n`,
      [fingerprint],
    );
    return Number(row?.n ?? 0);
  }

  /** The environment variable names the company's env-provider secrets read (their latest external reference). */
  envRefs(companyId: string): Promise<Array<{ name: string; externalRef: string }>> {
    return this.rows(
      companyId,
      `SELECT name, external_ref AS "externalRef" FROM company_secrets WHERE company_id = $1 AND provider = 'env' AND external_ref IS NOT NULL`,
    );
  }
}
