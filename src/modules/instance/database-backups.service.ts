import { randomUUID } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Injectable, Logger } from '@nestjs/common';
import type { Actor } from '../../common/auth/actor';
import { AppConfig } from '../../config/app-config';
import { Db } from '../../database/db.service';
import { writeLogicalBackup } from '../../database/logical-backup';
import { choosePgDump, pgDump } from '../../database/pg-dump';
import { backupsToKeep } from './backup-retention';
import { BackupRecord, DatabaseBackupsRepository } from './database-backups.repository';
import { DatabaseBackupDto } from './dto/database-backups.dto';
import { instanceError } from './instance.errors';
import { InstanceSettingsService } from './instance-settings.service';

const toDto = (r: BackupRecord, dir: string, engineNote?: string): DatabaseBackupDto => ({
  id: r.id,
  fileName: r.fileName,
  engine: r.engine,
  trigger: r.trigger,
  status: r.status,
  sizeBytes: r.sizeBytes === null ? null : Number(r.sizeBytes),
  durationMs: r.durationMs,
  error: r.error,
  instanceId: r.instanceId,
  // the file is in the backup directory of the instance that wrote it
  path: path.join(dir, r.fileName),
  createdAt: r.createdAt.toISOString(),
  finishedAt: r.finishedAt?.toISOString() ?? null,
  ...(engineNote ? { engineNote } : {}),
});

const stamp = (d: Date) =>
  d
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, 'Z');

/**
 * Logical backups of the service's database into the backup directory (`<data dir>/backups`):
 * `pg_dump --format=custom` when a pg_dump at least as new as the server is available, else the
 * built-in dumper (src/database/logical-backup.ts). `npm run restore` reads both back. The secrets
 * master key is a file of the data directory, never a database row: no backup contains it.
 */
@Injectable()
export class DatabaseBackupsService {
  private readonly logger = new Logger('DatabaseBackups');

  constructor(
    private readonly repo: DatabaseBackupsRepository,
    private readonly config: AppConfig,
    private readonly db: Db,
    private readonly settings: InstanceSettingsService,
  ) {}

  get dir(): string {
    return this.config.backups.dir;
  }

  async list(limit = 100): Promise<DatabaseBackupDto[]> {
    return (await this.repo.list(limit)).map((r) => toDto(r, this.dir));
  }

  /** Writes one backup; its row is committed on its own (a failed backup stays listed as failed). */
  async create(trigger: 'manual' | 'scheduled', actor?: Actor): Promise<DatabaseBackupDto> {
    return this.db.detached(async () => {
      const { engine, binary, note } = await this.chooseEngine();
      fs.mkdirSync(this.dir, { recursive: true, mode: 0o700 });
      const fileName = `backup-${stamp(new Date())}-${trigger}-${randomUUID().slice(0, 8)}${engine === 'pg_dump' ? '.dump' : '.ndjson.gz'}`;
      const file = path.join(this.dir, fileName);
      const row = await this.repo.insert({
        fileName,
        engine,
        trigger,
        instanceId: this.config.heartbeat.instanceId,
        userId: actor?.kind === 'board' ? actor.userId : null,
      });
      const started = Date.now();
      try {
        if (engine === 'pg_dump') await pgDump(binary!, this.databaseUrl, file);
        else await writeLogicalBackup(this.databaseUrl, file, { secretsMasterKeyFingerprint: this.config.secretsMasterKeyFingerprint });
      } catch (err) {
        const message = (err as Error).message;
        await this.repo.finish(row.id, { status: 'failed', durationMs: Date.now() - started, error: message });
        this.logger.error(`backup ${fileName} failed: ${message}`);
        throw instanceError('backup_failed', `The backup failed: ${message}`, { backupId: row.id });
      }
      const done = await this.repo.finish(row.id, {
        status: 'succeeded',
        sizeBytes: fs.statSync(file).size,
        durationMs: Date.now() - started,
      });
      return toDto(done, this.dir, note);
    });
  }

  /**
   * The scheduled backup, when due and claimed by this instance (once across instances). Then the
   * retention, on every tick of every instance: each deletes from its own backup directory.
   */
  async runScheduled(): Promise<DatabaseBackupDto | null> {
    const s = await this.settings.general();
    if (!s.databaseBackupEnabled) return null;
    const made = (await this.repo.claimDue(this.config.heartbeat.instanceId, s.databaseBackupIntervalMinutes))
      ? await this.create('scheduled')
      : null;
    await this.applyRetention({
      daily: s.databaseBackupRetentionDaily,
      weekly: s.databaseBackupRetentionWeekly,
      monthly: s.databaseBackupRetentionMonthly,
    });
    return made;
  }

  /** Deletes scheduled backups beyond the retention; only files of this instance's backup directory are touched. */
  async applyRetention(keep: { daily: number; weekly: number; monthly: number }): Promise<string[]> {
    const local = (await this.repo.scheduled()).filter((r) => fs.existsSync(path.join(this.dir, r.fileName)));
    const kept = backupsToKeep(
      local.map((r) => ({ id: r.id, createdAt: r.createdAt })),
      keep,
    );
    const gone = local.filter((r) => !kept.has(r.id));
    for (const r of gone) fs.rmSync(path.join(this.dir, r.fileName), { force: true });
    await this.repo.markDeleted(gone.map((r) => r.id));
    return gone.map((r) => r.fileName);
  }

  private get databaseUrl(): string {
    const url = (this.db.dataSource.options as { url?: string }).url;
    if (!url) throw new Error('the data source has no URL');
    return url;
  }

  private async chooseEngine(): Promise<{ engine: 'pg_dump' | 'builtin'; binary?: string; note?: string }> {
    const wanted = this.config.backups.engine;
    if (wanted === 'builtin') return { engine: 'builtin' };
    const choice = await choosePgDump(this.config.backups, await this.repo.serverVersionNum());
    if (choice.path) return { engine: 'pg_dump', binary: choice.path };
    if (wanted === 'pg_dump') throw instanceError('backup_engine_unavailable', `SERVICE_BACKUP_ENGINE=pg_dump but ${choice.reason}`);
    return { engine: 'builtin', note: `built-in dumper: ${choice.reason}` };
  }
}
