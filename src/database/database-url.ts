import * as path from 'node:path';
import { Client } from 'pg';
import { AppConfig } from '../config/app-config';
import { EmbeddedPostgres } from './embedded-postgres';

export const EMBEDDED_DATABASE = 'service';

/**
 * DATABASE_URL set: that Postgres, nothing embedded starts. Otherwise the embedded cluster in
 * `<data dir>/db` is started and its `service` database created on first use.
 */
export async function resolveDatabase(
  config: AppConfig,
  log: (msg: string) => void,
): Promise<{ url: string; embedded?: EmbeddedPostgres }> {
  if (config.databaseUrl) return { url: config.databaseUrl };
  const embedded = new EmbeddedPostgres({ dataDir: path.join(config.dataDir, 'db'), log });
  await embedded.start();
  await ensureDatabase(embedded.url, EMBEDDED_DATABASE);
  return { url: embedded.urlFor(EMBEDDED_DATABASE), embedded };
}

export async function ensureDatabase(adminUrl: string, name: string, template?: string): Promise<void> {
  const client = new Client({ connectionString: adminUrl });
  await client.connect();
  try {
    const exists = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (!exists.rowCount) {
      await client.query(`CREATE DATABASE "${name.replace(/"/g, '')}"${template ? ` TEMPLATE "${template.replace(/"/g, '')}"` : ''}`);
    }
  } finally {
    await client.end();
  }
}
