import * as path from 'node:path';
import { Client } from 'pg';
import { AppConfig } from '../config/app-config';
import { EMBEDDED_DATABASE, resolveDatabase } from '../database/database-url';
import { liveEmbeddedUrl } from '../database/embedded-postgres';
import { CliContext, CliError } from './cli-context';

export interface CliDatabase {
  url: string;
  /** where the URL came from: DATABASE_URL, the embedded cluster a running service holds, or one started for this command */
  source: 'DATABASE_URL' | 'embedded (running)' | 'embedded (started)';
  close(): Promise<void>;
}

/**
 * The service's database for the commands that must reach it directly: DATABASE_URL; else the
 * embedded cluster of the data directory, the running one when a service holds it (postmaster.pid),
 * else started for the command and stopped after it.
 */
export async function openDatabase(ctx: CliContext, config: AppConfig, opts: { start?: boolean } = {}): Promise<CliDatabase> {
  if (config.databaseUrl) return { url: config.databaseUrl, source: 'DATABASE_URL', close: async () => undefined };
  const live = liveEmbeddedUrl(path.join(config.dataDir, 'db'), EMBEDDED_DATABASE);
  if (live) return { url: live, source: 'embedded (running)', close: async () => undefined };
  if (opts.start === false)
    throw new CliError('no DATABASE_URL and no running embedded database in the data directory', 'database_unreachable');
  const db = await resolveDatabase(config, (m) => ctx.log.info(m));
  return { url: db.url, source: 'embedded (started)', close: async () => void (await db.embedded?.stop()) };
}

/** A connected client (5 s connect timeout), ended by `fn`'s end. */
export async function withClient<T>(url: string, fn: (c: Client) => Promise<T>): Promise<T> {
  const client = new Client({ connectionString: url, connectionTimeoutMillis: 5000, application_name: 'aos-cli' });
  try {
    await client.connect();
  } catch (err) {
    throw new CliError(`the database is not reachable: ${(err as Error).message}`, 'database_unreachable');
  }
  try {
    return await fn(client);
  } finally {
    await client.end().catch(() => undefined);
  }
}
