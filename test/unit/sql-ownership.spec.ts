import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { TABLE_OWNERS } from '../../src/database/table-owners';
import { AuditedStatement, auditRepositories, companyTables, foreignTables, namesCompany } from '../support/sql-audit';

/**
 * Tenancy and table ownership by construction: every repository statement is read here against
 * src/database/table-owners.ts. `SQL_AUDIT=1` prints the counts and the statements behind them.
 */
const ROOT = join(__dirname, '..', '..');
const statements = auditRepositories(ROOT);
const where = (s: AuditedStatement) => `${s.file}:${s.line}`;

if (process.env.SQL_AUDIT) {
  const on = statements.filter((s) => companyTables(s).length > 0);
  const report = {
    statements: statements.length,
    byPath: Object.fromEntries(['scoped', 'instance', 'unscoped', 'raw'].map((p) => [p, statements.filter((s) => s.path === p).length])),
    unresolved: statements.filter((s) => s.sql === null).map(where),
    onCompanyTables: on.length,
    notNamingCompany: on.filter((s) => !namesCompany(s)).map((s) => `${where(s)} ${companyTables(s).join(',')}`),
    foreign: statements.filter((s) => foreignTables(s).length > 0).map((s) => `${where(s)} ${foreignTables(s).join(',')}`),
    foreignWrites: statements
      .filter((s) => foreignTables(s, s.writes).length > 0)
      .map((s) => `${where(s)} ${foreignTables(s, s.writes).join(',')}`),
  };
  process.stdout.write(JSON.stringify(report, null, 1) + '\n');
}

describe('table ownership', () => {
  it('maps every table the migrations create, and no other', () => {
    let all = '';
    for (const f of readdirSync(join(ROOT, 'migrations'))) all += readFileSync(join(ROOT, 'migrations', f), 'utf8');
    const created = new Set([...all.matchAll(/CREATE TABLE (?:IF NOT EXISTS )?"?(\w+)"?/g)].map((m) => m[1]));
    expect([...created].sort()).toEqual(Object.keys(TABLE_OWNERS).sort());
  });

  it('finds the statements of the repositories', () => {
    expect(statements.length).toBeGreaterThan(300);
  });
});
