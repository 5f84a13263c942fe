import * as fs from 'node:fs';
import * as path from 'node:path';
import { DataSource, DataSourceOptions } from 'typeorm';
import { SnakeNamingStrategy } from './naming-strategy';
import { MAX_PREPARED, PREPARE_AFTER, preparingClientClass } from './prepared-statements';
import { coalescingClientClass } from './write-coalescing';
import { poolTypes } from './type-parsers';

// Entities and migrations are discovered by file name so that a new domain adds files, not registry lines.
type Ctor = new (...args: never[]) => unknown;

function isSourceFile(f: string, suffix: string): boolean {
  if (f.endsWith('.d.ts')) return false;
  return f.endsWith(`${suffix}.ts`) || f.endsWith(`${suffix}.js`);
}

function walk(dir: string, out: string[] = []): string[] {
  if (!fs.existsSync(dir)) return out;
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) walk(p, out);
    else out.push(p);
  }
  return out;
}

function classesOf(files: string[]): Ctor[] {
  const out: Ctor[] = [];
  for (const f of files.sort()) {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const mod = require(f) as Record<string, unknown>;
    for (const v of Object.values(mod)) if (typeof v === 'function') out.push(v as Ctor);
  }
  return out;
}

const srcRoot = path.join(__dirname, '..');
const migrationsDir = path.join(__dirname, '..', '..', 'migrations');

export function entityClasses(): Ctor[] {
  return classesOf(walk(srcRoot).filter((f) => isSourceFile(f, '.entity')));
}

export function migrationClasses(): Ctor[] {
  const files = walk(migrationsDir).filter((f) => /\/\d{13}-[\w-]+\.(ts|js)$/.test(f) && !f.endsWith('.d.ts'));
  return classesOf(files);
}

export function dataSourceOptions(url: string, poolSize = 20): DataSourceOptions {
  return {
    type: 'postgres',
    url,
    entities: entityClasses(),
    migrations: migrationClasses(),
    migrationsTableName: 'schema_migrations',
    namingStrategy: new SnakeNamingStrategy(),
    synchronize: false,
    migrationsRun: false,
    logging: false,
    // pipeline: statements sent together share a round trip (see Db). Client: hot statements are prepared
    // once per connection, so Postgres parses them once and, after five runs, may keep a generic plan
    // (planning cost as much as executing for the issue list); statements whose plan depends on their
    // values are planned for them every time (Db.query's `plan: 'custom'`); statements sent in one turn
    // leave in one socket write (write-coalescing.ts). Sessions run in UTC: spend windows are UTC calendar
    // months, and timestamps then arrive in the one form the fast parser reads (type-parsers.ts)
    extra: {
      max: poolSize,
      application_name: 'agent-orchestration-service',
      pipeline: true,
      Client: preparingClientClass(PREPARE_AFTER, MAX_PREPARED, coalescingClientClass()),
      types: poolTypes,
      options: '-c TimeZone=UTC',
    },
  };
}

const MIGRATION_LOCK = 7_214_001;

/** Runs pending migrations under an advisory lock, so that instances starting together migrate once. */
export async function runMigrations(ds: DataSource): Promise<void> {
  const qr = ds.createQueryRunner();
  await qr.connect();
  try {
    await qr.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK]);
    await ds.runMigrations({ transaction: 'each' });
  } finally {
    await qr.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK]).catch(() => undefined);
    await qr.release();
  }
}
