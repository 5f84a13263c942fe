import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Command } from 'commander';
import { writeLogicalBackup } from '../../database/logical-backup';
import { restoreBackup } from '../../database/restore-backup';
import { ApiClient } from '../api-client';
import { action, CliContext, CliError } from '../cli-context';
import { openDatabase, withClient } from '../cli-database';
import { CliRepository } from '../cli.repository';
import { progressBar, withSpinner } from '../progress';

interface BackupAnswer {
  id: string;
  fileName: string;
  engine: string;
  status: string;
  sizeBytes: number | null;
  durationMs: number | null;
  path: string;
  instanceId: string;
  engineNote?: string;
}

const stamp = () =>
  new Date()
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, 'Z');

/**
 * `aos backup`: asks the running service for a backup (POST /api/instance/database-backups; the
 * file lands in its backup directory). With --direct, the CLI reads the database itself (the
 * service may be stopped) and writes a built-in backup to --out.
 */
export async function backup(ctx: CliContext, opts: { direct?: boolean; out?: string }): Promise<number> {
  if (!opts.direct) {
    if (opts.out) throw new CliError("--out needs --direct (an API backup is written to the service's backup directory)", 'usage');
    const api = new ApiClient(ctx);
    const b = await withSpinner(ctx, 'backing up through the service', api.post<BackupAnswer>('/api/instance/database-backups'));
    if (b.engineNote) ctx.log.info(b.engineNote);
    ctx.result(b, [
      `backup ${b.fileName} written by ${b.instanceId} (${b.engine}, ${b.sizeBytes} bytes, ${b.durationMs} ms)`,
      `path: ${b.path}`,
    ]);
    return 0;
  }
  const config = ctx.loadConfig();
  const out = path.resolve(opts.out ?? path.join(config.backups.dir, `backup-${stamp()}-cli.ndjson.gz`));
  fs.mkdirSync(path.dirname(out), { recursive: true, mode: 0o700 });
  if (fs.existsSync(out)) throw new CliError(`${out} exists; choose another --out`, 'file_exists');
  const db = await openDatabase(ctx, config);
  const bar = progressBar(ctx, 'backup', 'tables');
  const started = Date.now();
  try {
    const r = await writeLogicalBackup(db.url, out, { secretsMasterKeyFingerprint: config.secretsMasterKeyFingerprint }, (p) =>
      bar.update(p.done, p.total),
    );
    bar.stop();
    const size = fs.statSync(out).size;
    const result = { path: out, engine: 'builtin', tables: r.tables, rows: r.rows, sizeBytes: size, durationMs: Date.now() - started };
    ctx.result(result, `backup written to ${out} (builtin, ${r.tables} tables, ${r.rows} rows, ${size} bytes) in ${result.durationMs} ms`);
    ctx.log.info('run logs, attachments and keys live in the data directory and are not in a database backup: copy the data directory too');
    return 0;
  } finally {
    bar.stop();
    await db.close();
  }
}

/**
 * `aos restore <file>`: restores a backup (pg_dump custom archive or built-in) into an empty
 * database: --database-url, else DATABASE_URL, else the embedded database of SERVICE_DATA_DIR
 * (created when missing). Warns when the restored secrets need another master key and when run
 * logs the database names are not in this data directory.
 */
export async function restore(ctx: CliContext, file: string, opts: { databaseUrl?: string }): Promise<number> {
  if (!fs.existsSync(file)) throw new CliError(`no such file: ${file}`, 'file_not_found');
  const config = ctx.loadConfig(opts.databaseUrl ? { DATABASE_URL: opts.databaseUrl } : {});
  const db = await openDatabase(ctx, config);
  const bar = progressBar(ctx, 'restore', 'bytes');
  try {
    const started = Date.now();
    const r = await restoreBackup(file, db.url, config.backups, (p) => bar.update(p.done, p.total));
    bar.stop();
    const ms = Date.now() - started;
    ctx.result(
      { file, format: r.format, tables: r.tables, rows: r.rows, durationMs: ms },
      `restored ${file} (${r.format}${r.rows !== undefined ? `, ${r.tables} tables, ${r.rows} rows` : ''}) in ${ms} ms`,
    );
    await withClient(db.url, async (c) => {
      const repo = new CliRepository(c);
      const keys = [...new Set([...(await repo.secretKeyFingerprints()).map((f) => f.fingerprint), r.secretsMasterKeyFingerprint ?? ''])];
      const other = keys.filter((k) => k && k !== config.secretsMasterKeyFingerprint);
      if (other.length) {
        ctx.log.warn(
          { backupKeyFingerprints: other, configuredKeyFingerprint: config.secretsMasterKeyFingerprint },
          `the backup's secrets were encrypted with master key ${other.join(', ')}, this configuration has ${config.secretsMasterKeyFingerprint}; ` +
            'start the service with the original key (SERVICE_SECRETS_MASTER_KEY, _FILE, or <data dir>/keys/secrets-master-key) or stored secrets cannot be decrypted',
        );
      }
      const logs = await repo.runLogPaths();
      const missing = logs.filter((p) => !fs.existsSync(path.join(config.dataDir, p)));
      if (missing.length) {
        ctx.log.warn(
          { runLogsMissing: missing.length, runLogs: logs.length, dataDir: config.dataDir },
          `${missing.length} of ${logs.length} run logs are not in ${path.join(config.dataDir, 'run-logs')}: a backup holds the database only, ` +
            'so those runs read as empty logs; copy the run-logs folder of the old data directory to keep them',
        );
      }
    });
    return 0;
  } finally {
    bar.stop();
    await db.close();
  }
}

export function registerBackup(program: Command): void {
  program
    .command('backup')
    .description('back up the database: through the running service (default), or directly with --direct')
    .option('--direct', 'read the database directly (the service may be stopped) and write a built-in backup')
    .option('--out <file>', 'with --direct: where to write (default <backup dir>/backup-<time>-cli.ndjson.gz)')
    .action(action('backup', backup));
  program
    .command('restore')
    .description('restore a backup file (pg_dump archive or built-in) into an empty database; stop the service first')
    .argument('<file>', 'the backup file')
    .option('--database-url <url>', 'restore into this database (default DATABASE_URL, else the embedded one)')
    .action(action('restore', restore));
}
