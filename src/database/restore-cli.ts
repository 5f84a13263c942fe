import * as fs from 'node:fs';
import { ConfigError, loadConfig } from '../config/app-config';
import { resolveDatabase } from './database-url';
import { restoreBackup } from './restore-backup';

const USAGE = 'usage: npm run restore -- <backup file> [--database-url postgres://…]';

/**
 * `npm run restore -- <file>`: restores a backup (pg_dump custom archive or built-in) into an empty
 * database: `--database-url`, else DATABASE_URL, else the embedded database of SERVICE_DATA_DIR
 * (created when missing). Then start the service on it with the same secrets master key.
 */
async function main(): Promise<void> {
  const args = process.argv.slice(2);
  let file: string | undefined;
  let url: string | undefined;
  for (let i = 0; i < args.length; i++) {
    if (args[i] === '--database-url') url = args[++i];
    else if (args[i] === '--help' || args[i] === '-h') return void process.stdout.write(USAGE + '\n');
    else if (!file) file = args[i];
    else throw new ConfigError(`unexpected argument ${args[i]}\n${USAGE}`);
  }
  if (!file) throw new ConfigError(USAGE);
  if (!fs.existsSync(file)) throw new ConfigError(`no such file: ${file}`);
  const config = loadConfig(url ? { ...process.env, DATABASE_URL: url } : process.env);
  const db = await resolveDatabase(config, (m) => process.stdout.write(m + '\n'));
  try {
    const started = Date.now();
    const r = await restoreBackup(file, db.url, config.backups);
    process.stdout.write(
      `restored ${file} (${r.format}${r.rows !== undefined ? `, ${r.tables} tables, ${r.rows} rows` : ''}) in ${Date.now() - started} ms\n`,
    );
    if (r.secretsMasterKeyFingerprint && r.secretsMasterKeyFingerprint !== config.secretsMasterKeyFingerprint) {
      process.stdout.write(
        `warning: the backup was made with secrets master key ${r.secretsMasterKeyFingerprint}, this configuration has ${config.secretsMasterKeyFingerprint}; ` +
          'start the service with the original key (SERVICE_SECRETS_MASTER_KEY, _FILE, or <data dir>/keys/secrets-master-key) or stored secrets cannot be decrypted\n',
      );
    }
  } finally {
    await db.embedded?.stop();
  }
}

main().catch((err) => {
  process.stderr.write(`${err instanceof ConfigError ? '' : 'Restore failed: '}${(err as Error).message}\n`);
  process.exit(1);
});
