import { execFile } from 'node:child_process';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { Client } from 'pg';
import { ensureBuiltDir } from './service-process';

const run = promisify(execFile);

export async function sqlClient(url: string): Promise<Client> {
  const c = new Client({ connectionString: url });
  await c.connect();
  return c;
}

/** An empty database (from template0) on the server of `adminUrl`; returns its URL. */
export async function emptyDatabase(adminUrl: string, name: string): Promise<string> {
  const c = await sqlClient(adminUrl);
  try {
    await c.query(`CREATE DATABASE ${name} TEMPLATE template0 ENCODING 'UTF8'`);
  } finally {
    await c.end();
  }
  const u = new URL(adminUrl);
  u.pathname = `/${name}`;
  return u.toString();
}

/** Per table of public: row count and an order-independent checksum of the rows' text. */
export async function tableFingerprints(url: string): Promise<Record<string, { count: number; md5: string }>> {
  const c = await sqlClient(url);
  try {
    const { rows: tables } = await c.query(
      `SELECT relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'public' AND relkind = 'r' ORDER BY relname`,
    );
    const out: Record<string, { count: number; md5: string }> = {};
    for (const { relname } of tables) {
      const { rows } = await c.query(
        `SELECT count(*)::int AS n, md5(coalesce(string_agg(t::text, '|' ORDER BY t::text), '')) AS h FROM public."${relname}" t`,
      );
      out[relname] = { count: rows[0].n, md5: rows[0].h };
    }
    return out;
  } finally {
    await c.end();
  }
}

/** `npm run restore -- <file> --database-url <url>` (the built CLI). */
export async function restoreCli(file: string, url: string, env: Record<string, string> = {}): Promise<string> {
  const cli = path.join(await ensureBuiltDir(), 'src', 'cli', 'main.js');
  const { stdout } = await run(process.execPath, [cli, 'restore', file, '--database-url', url], {
    env: { PATH: process.env.PATH, HOME: process.env.HOME, SERVICE_EPHEMERAL_KEYS: 'true', ...env },
    timeout: 120_000,
  });
  return stdout;
}
