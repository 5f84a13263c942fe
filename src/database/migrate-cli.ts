import { DataSource } from 'typeorm';
import { ConfigError, loadConfig } from '../config/app-config';
import { dataSourceOptions, runMigrations } from './data-source';
import { resolveDatabase } from './database-url';

/** `npm run migrate`: applies pending migrations to DATABASE_URL or the embedded database, then exits. */
async function main(): Promise<void> {
  // migrations need no keys: nothing is written to the data directory but the embedded database
  const config = loadConfig(process.env, { writeKeys: false });
  const db = await resolveDatabase(config, (m) => process.stdout.write(m + '\n'));
  const ds = new DataSource(dataSourceOptions(db.url, 2));
  try {
    await ds.initialize();
    const pending = await ds.showMigrations();
    await runMigrations(ds);
    process.stdout.write(pending ? 'migrations applied\n' : 'database is up to date\n');
  } finally {
    await ds.destroy().catch(() => undefined);
    await db.embedded?.stop();
  }
}

main().catch((err) => {
  process.stderr.write(`${err instanceof ConfigError ? 'Configuration error' : 'Migration failed'}: ${(err as Error).message}\n`);
  process.exit(1);
});
