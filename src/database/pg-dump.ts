import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** Where pg_dump/pg_restore come from (SERVICE_PG_DUMP_PATH, SERVICE_PG_RESTORE_PATH; default: PATH). */
export interface PgToolPaths {
  pgDumpPath?: string;
  pgRestorePath?: string;
}

export interface PgDumpChoice {
  /** the pg_dump to use, or null with the reason none is usable */
  path: string | null;
  version?: string;
  reason?: string;
}

function onPath(name: string): string | null {
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    if (!dir) continue;
    const p = path.join(dir, name);
    try {
      fs.accessSync(p, fs.constants.X_OK);
      return p;
    } catch {
      /* not here */
    }
  }
  return null;
}

async function majorOf(binary: string): Promise<{ major: number; version: string } | null> {
  try {
    const { stdout } = await run(binary, ['--version'], { timeout: 10_000 });
    const m = /(\d+)(?:\.(\d+))?/.exec(stdout);
    return m ? { major: Number(m[1]), version: stdout.trim() } : null;
  } catch {
    return null;
  }
}

/** pg_dump refuses servers newer than itself: usable only when its major version >= the server's. */
export async function choosePgDump(paths: PgToolPaths, serverVersionNum: number): Promise<PgDumpChoice> {
  const candidate = paths.pgDumpPath ?? onPath('pg_dump');
  if (!candidate) return { path: null, reason: 'no pg_dump found (set SERVICE_PG_DUMP_PATH)' };
  const v = await majorOf(candidate);
  if (!v) return { path: null, reason: `${candidate} did not answer --version` };
  const serverMajor = Math.floor(serverVersionNum / 10000);
  if (v.major < serverMajor)
    return { path: null, version: v.version, reason: `${candidate} is version ${v.major}, older than the server (${serverMajor})` };
  return { path: candidate, version: v.version };
}

/** Connection settings as libpq environment variables (the password never appears on a command line). */
export function libpqEnv(databaseUrl: string): { env: NodeJS.ProcessEnv; dbname: string } {
  const u = new URL(databaseUrl);
  return {
    env: {
      PATH: process.env.PATH,
      PGHOST: decodeURIComponent(u.hostname.replace(/^\[|\]$/g, '')),
      PGPORT: u.port || '5432',
      PGUSER: decodeURIComponent(u.username),
      PGPASSWORD: decodeURIComponent(u.password),
      PGDATABASE: decodeURIComponent(u.pathname.slice(1)),
      ...(u.searchParams.get('sslmode') ? { PGSSLMODE: u.searchParams.get('sslmode')! } : {}),
    },
    dbname: decodeURIComponent(u.pathname.slice(1)),
  };
}

/** `pg_dump --format=custom` (compressed) of the database into `file`. */
export async function pgDump(binary: string, databaseUrl: string, file: string): Promise<void> {
  const { env } = libpqEnv(databaseUrl);
  try {
    await run(binary, ['--format=custom', '--compress=6', '--no-owner', '--no-privileges', `--file=${file}`], {
      env,
      timeout: 3_600_000,
      maxBuffer: 16 * 1024 * 1024,
    });
    fs.chmodSync(file, 0o600);
  } catch (err) {
    fs.rmSync(file, { force: true });
    const stderr = (err as { stderr?: string }).stderr?.trim();
    throw new Error(`pg_dump failed: ${stderr || (err as Error).message}`);
  }
}

/** Restores a custom-format dump into an (empty) database, in one transaction. */
export async function pgRestore(binary: string, databaseUrl: string, file: string): Promise<void> {
  const { env, dbname } = libpqEnv(databaseUrl);
  try {
    await run(binary, ['--no-owner', '--no-privileges', '--exit-on-error', '--single-transaction', `--dbname=${dbname}`, file], {
      env,
      timeout: 3_600_000,
      maxBuffer: 16 * 1024 * 1024,
    });
  } catch (err) {
    const stderr = (err as { stderr?: string }).stderr?.trim();
    throw new Error(`pg_restore failed: ${stderr || (err as Error).message}`);
  }
}

/** pg_restore: SERVICE_PG_RESTORE_PATH, else beside the configured pg_dump, else on PATH. */
export function findPgRestore(paths: PgToolPaths): string | null {
  if (paths.pgRestorePath) return paths.pgRestorePath;
  if (paths.pgDumpPath) {
    const sibling = path.join(path.dirname(paths.pgDumpPath), 'pg_restore');
    if (fs.existsSync(sibling)) return sibling;
  }
  return onPath('pg_restore');
}

/** A custom-format pg_dump archive starts with "PGDMP"; a built-in backup is gzip (1f 8b). */
export function backupFormatOf(file: string): 'pg_dump' | 'builtin' | null {
  const fd = fs.openSync(file, 'r');
  try {
    const buf = Buffer.alloc(5);
    fs.readSync(fd, buf, 0, 5, 0);
    if (buf.toString('latin1') === 'PGDMP') return 'pg_dump';
    if (buf[0] === 0x1f && buf[1] === 0x8b) return 'builtin';
    return null;
  } finally {
    fs.closeSync(fd);
  }
}
