import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DATABASE_PORTS, FOREIGN_READS, TABLE_OWNERS } from '../../src/database/table-owners';
import {
  AuditedStatement,
  auditRepositories,
  companyTables,
  entityTables,
  foreignTables,
  namesCompany as namesCompanyIn,
} from '../support/sql-audit';

/**
 * Tenancy and table ownership by construction: every repository statement is read here against
 * src/database/table-owners.ts. `SQL_AUDIT=1` prints the counts and the statements behind them.
 */
const ROOT = join(__dirname, '..', '..');
const statements = auditRepositories(ROOT);
const entities = entityTables(ROOT);
const namesCompany = (s: AuditedStatement) => namesCompanyIn(s, entities);
const where = (s: AuditedStatement) => `${s.file}:${s.line}`;

if (process.env.SQL_AUDIT) {
  const on = statements.filter((s) => companyTables(s).length > 0);
  const report = {
    statements: statements.length,
    byPath: Object.fromEntries(
      ['scoped', 'instance', 'unscoped', 'raw', 'orm'].map((p) => [p, statements.filter((s) => s.path === p).length]),
    ),
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
    expect(statements.filter((s) => s.sql === null).map(where)).toEqual([]);
  });

  it('runs every statement through a base path: no raw query in a repository', () => {
    expect(statements.filter((s) => s.path === 'raw').map(where)).toEqual([]);
  });

  it('sees the TypeORM path: every orm, ormIn and unscopedOrm call names an entity of the module', () => {
    const orm = statements.filter((s) => s.entity !== undefined);
    expect(orm.length).toBeGreaterThan(20);
    expect(orm.filter((s) => s.sql === null).map((s) => `${where(s)} ${s.entity}`)).toEqual([]);
    expect(orm.filter((s) => foreignTables(s).length > 0).map((s) => `${where(s)} ${s.entity}`)).toEqual([]);
  });

  it('keeps orm() to whole-entity writes: a TypeORM read names its company (ormIn) or its reason (unscopedOrm)', () => {
    const base = readFileSync(join(ROOT, 'src', 'database', 'company-scoped.repository.ts'), 'utf8');
    expect(base).toMatch(/protected orm<T extends ObjectLiteral>\(entity: EntityTarget<T>\): OrmWrites<T>/);
    expect(base).toMatch(/export type OrmWrites<T extends ObjectLiteral> = Pick<Repository<T>, 'create' \| 'save' \| 'insert'>;/);
    const onCompanyTables = statements.filter((s) => s.path === 'orm' && companyTables(s).length > 0);
    expect(onCompanyTables.filter((s) => !namesCompany(s)).map((s) => `${where(s)} ${s.entity}`)).toEqual([]);
  });

  it('gives every unscoped statement a reason a reviewer can read', () => {
    const bad = statements.filter((s) => s.path === 'unscoped' && !(s.reason && s.reason.trim().split(/\s+/).length >= 3));
    expect(bad.map(where)).toEqual([]);
  });

  it('keeps company-owned tables off the instance-wide path', () => {
    expect(
      statements.filter((s) => s.path === 'instance' && companyTables(s).length > 0).map((s) => `${where(s)} ${companyTables(s)}`),
    ).toEqual([]);
  });

  it('names the company in every statement on a company-owned table (or says why not)', () => {
    expect(statements.filter((s) => companyTables(s).length > 0 && !namesCompany(s)).map(where)).toEqual([]);
  });

  it("writes only the module's own tables", () => {
    const foreign = statements.flatMap((s) => foreignTables(s, s.writes).map((t) => `${s.module} writes ${t} (${where(s)})`));
    expect(foreign.filter((f) => !OPERATOR_WRITES.some((w) => f.startsWith(w)))).toEqual([]);
  });

  it('calls a database port only from the modules it lists, and the owner defines what it writes', () => {
    let migrations = '';
    for (const f of readdirSync(join(ROOT, 'migrations'))) migrations += readFileSync(join(ROOT, 'migrations', f), 'utf8');
    for (const [name, port] of Object.entries(DATABASE_PORTS)) {
      expect(migrations).toMatch(new RegExp(`CREATE (OR REPLACE )?FUNCTION ${name}\\(`));
      for (const t of port.writes) expect(TABLE_OWNERS[t].owner).toBe(port.owner);
      const callers = new Set(statements.filter((s) => s.sql?.includes(`${name}(`)).map((s) => s.module));
      expect(callers.size).toBeGreaterThan(0);
      expect([...callers].filter((m) => !port.callers.includes(m))).toEqual([]);
    }
  });

  it("reads another module's table only where FOREIGN_READS says why", () => {
    const uncovered = statements.flatMap((s) =>
      foreignTables(s)
        .filter((t) => !s.writes.includes(t) && !(FOREIGN_READS[s.module] ?? []).some((r) => (r.tables as string[]).includes(t)))
        .map((t) => `${s.module} reads ${t} (${where(s)})`),
    );
    expect(uncovered).toEqual([]);
  });
});

/**
 * The one write outside an owner: the operator CLI issues the first board claim (`aos
 * claim-token`) in its own process, before any user exists and whether the service runs or not.
 */
const OPERATOR_WRITES = ['cli writes board_claims'];
