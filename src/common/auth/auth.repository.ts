import { Injectable } from '@nestjs/common';
import { CompanyScopedRepository } from '../../database/company-scoped.repository';
import { Db } from '../../database/db.service';

/**
 * The statement of the authentication hot path that is the guard's own: whether a company exists
 * (every company-scoped request, cached by CompanyAccessService). Credentials are resolved by the
 * modules that own them (AuthRegistry: agents' API keys, heartbeat's run tokens and live runs,
 * users' sessions and board tokens).
 */
@Injectable()
export class AuthRepository extends CompanyScopedRepository {
  constructor(db: Db) {
    super(db);
  }

  // reads companies (owned by companies): see FOREIGN_READS
  async companyExists(companyId: string): Promise<boolean> {
    const rows = await this.rows(companyId, 'SELECT 1 FROM companies WHERE id = $1');
    return rows.length > 0;
  }
}
