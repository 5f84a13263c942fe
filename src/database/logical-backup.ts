import * as fs from 'node:fs';
import * as readline from 'node:readline';
import { pipeline } from 'node:stream/promises';
import { Readable } from 'node:stream';
import { createGunzip, createGzip } from 'node:zlib';
import { Client } from 'pg';

/**
 * The built-in logical backup, used when no compatible `pg_dump` is available (the embedded
 * PostgreSQL package ships none). A gzip of JSON lines:
 *
 *   {"kind":"header","format":"aos-logical-backup","version":1,...}
 *   {"kind":"sql","phase":"pre","sql":"CREATE ..."}     extensions, sequences, functions, tables (columns only)
 *   {"kind":"table","table":"t","columns":[...]}         then {"kind":"rows","table":"t","rows":[{...}, ...]} batches
 *   {"kind":"sql","phase":"post","sql":"ALTER ..."}     constraints, indexes, triggers, sequence values
 *   {"kind":"end","tables":N,"rows":M}
 *
 * Read in one REPEATABLE READ snapshot, so tables are consistent with each other. Rows travel as
 * `to_jsonb(row)` and come back through `jsonb_populate_recordset`, which reads every type's text
 * form (bytea, arrays, timestamps, tsvector). Constraints, indexes and triggers are created after
 * the data: no ordering of foreign keys is needed and no trigger fires during a restore.
 */
export const LOGICAL_BACKUP_FORMAT = 'aos-logical-backup';
const BATCH = 500;

export interface LogicalBackupHeader {
  kind: 'header';
  format: typeof LOGICAL_BACKUP_FORMAT;
  version: 1;
  createdAt: string;
  serverVersion: string;
  database: string;
  /** migrations applied in the backed-up database (schema_migrations), newest last */
  migrations: string[];
  /** the secrets master key's fingerprint at backup time; the key itself is never in a backup */
  secretsMasterKeyFingerprint?: string;
}

type Line =
  | LogicalBackupHeader
  | { kind: 'sql'; phase: 'pre' | 'post'; sql: string }
  | { kind: 'table'; table: string; columns: string[] }
  | { kind: 'rows'; table: string; rows: unknown[] }
  | { kind: 'end'; tables: number; rows: number };

const ident = (name: string) => `"${name.replace(/"/g, '""')}"`;

/** Progress of a backup (tables written of all) or a restore (compressed bytes read of the file's size). */
export interface BackupProgress {
  done: number;
  total: number;
  rows: number;
}

/** Writes a built-in backup of `databaseUrl`'s public schema to `file`. */
export async function writeLogicalBackup(
  databaseUrl: string,
  file: string,
  meta: { secretsMasterKeyFingerprint?: string } = {},
  onProgress?: (p: BackupProgress) => void,
): Promise<{ tables: number; rows: number }> {
  const client = new Client({ connectionString: databaseUrl, application_name: 'aos-backup' });
  await client.connect();
  const out = createGzip();
  const sink = fs.createWriteStream(file, { mode: 0o600 });
  const done = pipeline(out, sink);
  const write = async (line: Line) => {
    if (!out.write(JSON.stringify(line) + '\n')) await new Promise((r) => out.once('drain', r));
  };
  let totalRows = 0;
  try {
    await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
    const q = async <T>(sql: string, params: unknown[] = []) => (await client.query(sql, params)).rows as T[];
    const [{ server_version, db }] = await q<{ server_version: string; db: string }>(
      `SELECT current_setting('server_version') AS server_version, current_database() AS db`,
    );
    const migrations = await q<{ name: string }>(`SELECT name FROM schema_migrations ORDER BY timestamp, id`).catch(
      () => [] as { name: string }[],
    );
    await write({
      kind: 'header',
      format: LOGICAL_BACKUP_FORMAT,
      version: 1,
      createdAt: new Date().toISOString(),
      serverVersion: server_version,
      database: db,
      migrations: migrations.map((m) => m.name),
      ...(meta.secretsMasterKeyFingerprint ? { secretsMasterKeyFingerprint: meta.secretsMasterKeyFingerprint } : {}),
    });
    for (const sql of await schemaStatements(q, 'pre')) await write({ kind: 'sql', phase: 'pre', sql });
    const tables = await q<{ name: string }>(
      `SELECT c.relname AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'public' AND c.relkind = 'r' ORDER BY c.relname`,
    );
    let tablesDone = 0;
    onProgress?.({ done: 0, total: tables.length, rows: 0 });
    for (const { name } of tables) {
      const cols = await q<{ attname: string }>(
        `SELECT attname FROM pg_attribute WHERE attrelid = $1::regclass AND attnum > 0 AND NOT attisdropped AND attgenerated = '' ORDER BY attnum`,
        [ident(name)],
      );
      const columns = cols.map((c) => c.attname);
      await write({ kind: 'table', table: name, columns });
      await client.query(`DECLARE backup_rows NO SCROLL CURSOR FOR SELECT to_jsonb(t) AS r FROM public.${ident(name)} t`);
      for (;;) {
        const batch = (await client.query(`FETCH ${BATCH} FROM backup_rows`)).rows as Array<{ r: Record<string, unknown> }>;
        if (batch.length === 0) break;
        totalRows += batch.length;
        await write({ kind: 'rows', table: name, rows: batch.map((b) => b.r) });
      }
      await client.query('CLOSE backup_rows');
      onProgress?.({ done: ++tablesDone, total: tables.length, rows: totalRows });
    }
    for (const sql of await schemaStatements(q, 'post')) await write({ kind: 'sql', phase: 'post', sql });
    await write({ kind: 'end', tables: tables.length, rows: totalRows });
    await client.query('COMMIT');
    out.end();
    await done;
    return { tables: tables.length, rows: totalRows };
  } catch (err) {
    out.destroy();
    await done.catch(() => undefined);
    fs.rmSync(file, { force: true });
    throw err;
  } finally {
    await client.end().catch(() => undefined);
  }
}

type Q = <T>(sql: string, params?: unknown[]) => Promise<T[]>;

/** DDL of the public schema from the catalogs: `pre` (before the data) or `post` (after it). */
async function schemaStatements(q: Q, phase: 'pre' | 'post'): Promise<string[]> {
  const out: string[] = [];
  if (phase === 'pre') {
    for (const e of await q<{ extname: string }>(`SELECT extname FROM pg_extension WHERE extname <> 'plpgsql' ORDER BY extname`)) {
      out.push(`CREATE EXTENSION IF NOT EXISTS ${ident(e.extname)}`);
    }
    const notFromExtension = (cls: string, col: string) =>
      `NOT EXISTS (SELECT 1 FROM pg_depend d WHERE d.classid = '${cls}'::regclass AND d.objid = ${col} AND d.deptype = 'e')`;
    for (const s of await q<{
      name: string;
      type: string;
      start: string;
      inc: string;
      min: string;
      max: string;
      cache: string;
      cycle: boolean;
    }>(
      `SELECT c.relname AS name, format_type(s.seqtypid, NULL) AS type, s.seqstart AS start, s.seqincrement AS inc, s.seqmin AS min, s.seqmax AS max, s.seqcache AS cache, s.seqcycle AS cycle
         FROM pg_sequence s JOIN pg_class c ON c.oid = s.seqrelid JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname = 'public' AND ${notFromExtension('pg_class', 'c.oid')} ORDER BY c.relname`,
    )) {
      out.push(
        `CREATE SEQUENCE public.${ident(s.name)} AS ${s.type} INCREMENT ${s.inc} MINVALUE ${s.min} MAXVALUE ${s.max} START ${s.start} CACHE ${s.cache}${s.cycle ? ' CYCLE' : ''}`,
      );
    }
    for (const f of await q<{ def: string }>(
      `SELECT pg_get_functiondef(p.oid) AS def FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
        WHERE n.nspname = 'public' AND p.prokind IN ('f','p') AND ${notFromExtension('pg_proc', 'p.oid')} ORDER BY p.proname, p.oid`,
    )) {
      out.push(f.def);
    }
    const cols = await q<{
      table: string;
      name: string;
      type: string;
      notnull: boolean;
      def: string | null;
      generated: string;
      collation: string | null;
    }>(
      `SELECT c.relname AS table, a.attname AS name, format_type(a.atttypid, a.atttypmod) AS type, a.attnotnull AS notnull,
              pg_get_expr(ad.adbin, ad.adrelid) AS def, a.attgenerated AS generated,
              CASE WHEN a.attcollation <> t.typcollation AND a.attcollation <> 0 THEN (SELECT collname FROM pg_collation WHERE oid = a.attcollation) END AS collation
         FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace
         JOIN pg_type t ON t.oid = a.atttypid LEFT JOIN pg_attrdef ad ON ad.adrelid = a.attrelid AND ad.adnum = a.attnum
        WHERE n.nspname = 'public' AND c.relkind = 'r' AND a.attnum > 0 AND NOT a.attisdropped
        ORDER BY c.relname, a.attnum`,
    );
    const byTable = new Map<string, string[]>();
    for (const c of cols) {
      let col = `${ident(c.name)} ${c.type}`;
      if (c.collation) col += ` COLLATE ${ident(c.collation)}`;
      if (c.generated === 's' && c.def) col += ` GENERATED ALWAYS AS (${c.def}) STORED`;
      else if (c.def) col += ` DEFAULT ${c.def}`;
      if (c.notnull) col += ' NOT NULL';
      byTable.set(c.table, [...(byTable.get(c.table) ?? []), col]);
    }
    for (const [table, defs] of byTable) out.push(`CREATE TABLE public.${ident(table)} (\n  ${defs.join(',\n  ')}\n)`);
    return out;
  }
  // post: primary keys and unique constraints first (foreign keys need them), then checks, foreign keys, indexes, triggers
  for (const c of await q<{ table: string; name: string; def: string }>(
    `SELECT cl.relname AS table, co.conname AS name, pg_get_constraintdef(co.oid) AS def
       FROM pg_constraint co JOIN pg_class cl ON cl.oid = co.conrelid JOIN pg_namespace n ON n.oid = cl.relnamespace
      WHERE n.nspname = 'public' AND cl.relkind = 'r' AND co.contype IN ('p','u','c','x','f') AND co.conislocal
      ORDER BY CASE co.contype WHEN 'p' THEN 0 WHEN 'u' THEN 1 WHEN 'x' THEN 2 WHEN 'c' THEN 3 ELSE 4 END, cl.relname, co.conname`,
  )) {
    out.push(`ALTER TABLE public.${ident(c.table)} ADD CONSTRAINT ${ident(c.name)} ${c.def}`);
  }
  for (const i of await q<{ def: string }>(
    `SELECT pg_get_indexdef(i.indexrelid) AS def FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = 'public' AND NOT EXISTS (SELECT 1 FROM pg_constraint co WHERE co.conindid = i.indexrelid AND co.contype IN ('p','u','x'))
      ORDER BY c.relname`,
  )) {
    out.push(i.def);
  }
  for (const t of await q<{ def: string }>(
    `SELECT pg_get_triggerdef(t.oid) AS def FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = 'public' AND NOT t.tgisinternal ORDER BY c.relname, t.tgname`,
  )) {
    out.push(t.def);
  }
  for (const s of await q<{ name: string; owner: string | null }>(
    `SELECT c.relname AS name,
            (SELECT quote_ident(tc.relname) || '.' || quote_ident(a.attname) FROM pg_depend d JOIN pg_class tc ON tc.oid = d.refobjid
               JOIN pg_attribute a ON a.attrelid = d.refobjid AND a.attnum = d.refobjsubid
              WHERE d.classid = 'pg_class'::regclass AND d.objid = c.oid AND d.refclassid = 'pg_class'::regclass AND d.deptype = 'a' LIMIT 1) AS owner
       FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = 'public' AND c.relkind = 'S' ORDER BY c.relname`,
  )) {
    if (s.owner) out.push(`ALTER SEQUENCE public.${ident(s.name)} OWNED BY public.${s.owner}`);
    const [v] = await q<{ last: string; called: boolean }>(
      `SELECT last_value::text AS last, is_called AS called FROM public.${ident(s.name)}`,
    );
    out.push(`SELECT setval('public.${ident(s.name)}', ${v.last}, ${v.called})`);
  }
  return out;
}

/** The header line of a built-in backup (throws when the file is not one). */
export async function readLogicalBackupHeader(file: string): Promise<LogicalBackupHeader> {
  for await (const line of lines(file)) {
    const header = JSON.parse(line) as LogicalBackupHeader;
    if (header.kind !== 'header' || header.format !== LOGICAL_BACKUP_FORMAT) break;
    return header;
  }
  throw new Error(`${file} is not a built-in backup (${LOGICAL_BACKUP_FORMAT})`);
}

function lines(file: string, onBytes?: (bytesRead: number) => void): AsyncIterable<string> {
  const raw = fs.createReadStream(file);
  if (onBytes) raw.on('data', () => onBytes(raw.bytesRead));
  const stream: Readable = raw.pipe(createGunzip());
  return readline.createInterface({ input: stream, crlfDelay: Infinity });
}

/**
 * Restores a built-in backup into `databaseUrl`, which must be empty (no table in public). One
 * transaction: a failed restore leaves the database empty.
 */
export async function restoreLogicalBackup(
  databaseUrl: string,
  file: string,
  onProgress?: (p: BackupProgress) => void,
): Promise<{ header: LogicalBackupHeader; tables: number; rows: number }> {
  const client = new Client({ connectionString: databaseUrl, application_name: 'aos-restore' });
  await client.connect();
  try {
    const [{ n }] = (
      await client.query(
        `SELECT count(*)::int AS n FROM pg_class c JOIN pg_namespace ns ON ns.oid = c.relnamespace WHERE ns.nspname = 'public' AND c.relkind IN ('r','S','v','m')`,
      )
    ).rows as Array<{ n: number }>;
    if (n > 0) throw new Error('the target database is not empty (restore only into an empty database)');
    await client.query('BEGIN');
    // SQL functions may name tables that are created after them
    await client.query('SET LOCAL check_function_bodies = false');
    let header: LogicalBackupHeader | undefined;
    let current: { table: string; columns: string[] } | undefined;
    let tables = 0;
    let rows = 0;
    let ended = false;
    const size = fs.statSync(file).size;
    const progress = onProgress && ((bytes: number) => onProgress({ done: bytes, total: size, rows }));
    for await (const text of lines(file, progress)) {
      if (!text) continue;
      const line = JSON.parse(text) as Line;
      if (!header) {
        if (line.kind !== 'header' || line.format !== LOGICAL_BACKUP_FORMAT)
          throw new Error(`not a built-in backup (${LOGICAL_BACKUP_FORMAT})`);
        if (line.version !== 1) throw new Error(`unsupported backup version ${line.version}`);
        header = line;
        continue;
      }
      if (line.kind === 'sql') await client.query(line.sql);
      else if (line.kind === 'table') {
        current = { table: line.table, columns: line.columns };
        tables++;
      } else if (line.kind === 'rows') {
        if (!current || current.table !== line.table) throw new Error(`rows of ${line.table} outside its table section`);
        const cols = current.columns.map(ident).join(', ');
        await client.query(
          `INSERT INTO public.${ident(current.table)} (${cols}) SELECT ${cols} FROM jsonb_populate_recordset(NULL::public.${ident(current.table)}, $1::jsonb)`,
          [JSON.stringify(line.rows)],
        );
        rows += line.rows.length;
      } else if (line.kind === 'end') {
        if (line.rows !== rows || line.tables !== tables)
          throw new Error(`backup incomplete: ${rows}/${line.rows} rows, ${tables}/${line.tables} tables`);
        ended = true;
      }
    }
    if (!header || !ended) throw new Error('backup truncated (no end marker)');
    await client.query('COMMIT');
    return { header, tables, rows };
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  } finally {
    await client.end().catch(() => undefined);
  }
}
