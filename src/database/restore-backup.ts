import { Client } from 'pg';
import { BackupProgress, readLogicalBackupHeader, restoreLogicalBackup } from './logical-backup';
import { backupFormatOf, findPgRestore, PgToolPaths, pgRestore } from './pg-dump';

export interface RestoreResult {
  format: 'pg_dump' | 'builtin';
  /** the master key fingerprint recorded in a built-in backup (pg_dump archives carry none) */
  secretsMasterKeyFingerprint?: string;
  tables?: number;
  rows?: number;
}

async function assertEmpty(databaseUrl: string): Promise<void> {
  const client = new Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query(
      `SELECT count(*)::int AS n FROM pg_class c JOIN pg_namespace ns ON ns.oid = c.relnamespace WHERE ns.nspname = 'public' AND c.relkind IN ('r','S','v','m')`,
    );
    if ((rows[0] as { n: number }).n > 0) throw new Error('the target database is not empty (restore only into an empty database)');
  } finally {
    await client.end();
  }
}

/** Restores a backup file of either engine into an empty database. */
export async function restoreBackup(
  file: string,
  databaseUrl: string,
  tools: PgToolPaths = {},
  onProgress?: (p: BackupProgress) => void,
): Promise<RestoreResult> {
  const format = backupFormatOf(file);
  if (!format) throw new Error(`${file} is neither a pg_dump custom archive nor a built-in backup`);
  await assertEmpty(databaseUrl);
  if (format === 'builtin') {
    const header = await readLogicalBackupHeader(file);
    const r = await restoreLogicalBackup(databaseUrl, file, onProgress);
    return { format, secretsMasterKeyFingerprint: header.secretsMasterKeyFingerprint, tables: r.tables, rows: r.rows };
  }
  const binary = findPgRestore(tools);
  if (!binary) throw new Error('no pg_restore found (set SERVICE_PG_RESTORE_PATH)');
  await pgRestore(binary, databaseUrl, file);
  return { format };
}
