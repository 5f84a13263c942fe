import type { Command } from 'commander';
import { DataSource } from 'typeorm';
import { dataSourceOptions, runMigrations } from '../../database/data-source';
import { action, CliContext } from '../cli-context';
import { openDatabase, withClient } from '../cli-database';
import { CliRepository } from '../cli.repository';

/** `aos migrate`: applies pending migrations to DATABASE_URL or the embedded database, then exits. */
export async function migrate(ctx: CliContext, opts: { check?: boolean }): Promise<number> {
  // migrations need no keys: nothing is written to the data directory but the embedded database
  const config = ctx.loadConfig();
  const db = await openDatabase(ctx, config);
  const ds = new DataSource(dataSourceOptions(db.url, 2));
  try {
    await ds.initialize();
    const appliedNames = () => withClient(db.url, (c) => new CliRepository(c).appliedMigrations());
    const before = await appliedNames();
    if (opts.check) {
      const pending = ds.migrations.map((m) => m.name ?? m.constructor.name).filter((n) => !before.includes(n));
      ctx.result({ pending }, pending.length ? `${pending.length} migrations pending: ${pending.join(', ')}` : 'database is up to date');
      return pending.length ? 1 : 0;
    }
    await runMigrations(ds);
    const applied = (await appliedNames()).filter((n) => !before.includes(n));
    ctx.result({ applied }, applied.length ? `migrations applied: ${applied.join(', ')}` : 'database is up to date');
    return 0;
  } finally {
    await ds.destroy().catch(() => undefined);
    await db.close();
  }
}

export function registerMigrate(program: Command): void {
  program
    .command('migrate')
    .description('apply pending database migrations (DATABASE_URL, else the embedded database of SERVICE_DATA_DIR)')
    .option('--check', 'only report pending migrations (exit 1 when some are pending)')
    .action(action('migrate', migrate));
}
