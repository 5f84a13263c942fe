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

/** The URL with its password masked, for messages. */
export function maskedUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return '(not a URL)';
  }
}

/**
 * Whether DATABASE_URL answers: a connection and `SELECT 1` within `timeoutMs`. Null, or a message
 * naming the setting to fix (a start-up that cannot reach its database says so in seconds, before
 * the application loads, instead of a bare `connect ECONNREFUSED`).
 */
export async function databaseUrlProblem(url: string, timeoutMs = 5000): Promise<string | null> {
  const client = new Client({ connectionString: url, connectionTimeoutMillis: timeoutMs, query_timeout: timeoutMs });
  client.on('error', () => undefined);
  try {
    await client.connect();
    await client.query('SELECT 1');
    return null;
  } catch (err) {
    const reason = /timeout/i.test((err as Error).message) ? `no answer within ${timeoutMs / 1000} s` : (err as Error).message;
    return `the database at DATABASE_URL (${maskedUrl(url)}) cannot be reached: ${reason}; fix DATABASE_URL, or unset it to use the embedded PostgreSQL`;
  } finally {
    await client.end().catch(() => undefined);
  }
}
