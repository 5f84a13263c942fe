import { CompanyScopedRepository } from '../../src/database/company-scoped.repository';
import type { Db } from '../../src/database/db.service';

/**
 * The company-scoped paths refuse a statement before it reaches the database: no company id, or a
 * statement that does not use it ($1). (The handle is never reached, so none is needed here; the
 * paths that do reach Postgres are exercised by every e2e test.)
 */
class Probe extends CompanyScopedRepository {
  constructor() {
    super({} as Db);
  }
  read(companyId: string, sql: string) {
    return this.rows(companyId, sql);
  }
  sweep(reason: string) {
    return this.unscoped(reason, 'SELECT 1');
  }
}

describe('CompanyScopedRepository', () => {
  const repo = new Probe();

  it('refuses a statement without a company id', () => {
    expect(() => repo.read('', 'SELECT * FROM goals WHERE company_id = $1')).toThrow(/without a companyId/);
  });

  it('refuses a statement that does not use its company id ($1)', () => {
    expect(() => repo.read('c1', 'SELECT * FROM goals WHERE id = $2')).toThrow(/does not use its company id/);
    expect(() => repo.read('c1', 'SELECT * FROM goals WHERE id = $10')).toThrow(/does not use its company id/);
  });

  it('refuses an unscoped statement without a reason', () => {
    expect(() => repo.sweep('')).toThrow(/without a reason/);
  });
});
