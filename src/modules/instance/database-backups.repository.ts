import { Injectable } from '@nestjs/common';
import { InstanceRepository } from '../../database/company-scoped.repository';
import { Db } from '../../database/db.service';

export interface BackupRecord {
  id: string;
  fileName: string;
  engine: 'pg_dump' | 'builtin';
  trigger: 'manual' | 'scheduled';
  status: 'running' | 'succeeded' | 'failed' | 'deleted';
  sizeBytes: string | null;
  durationMs: number | null;
  error: string | null;
  instanceId: string;
  requestedByUserId: string | null;
  createdAt: Date;
  finishedAt: Date | null;
}

const COLUMNS = `id, file_name AS "fileName", engine, trigger, status, size_bytes AS "sizeBytes", duration_ms AS "durationMs", error,
  instance_id AS "instanceId", requested_by_user_id AS "requestedByUserId", created_at AS "createdAt", finished_at AS "finishedAt"`;

/** Tables database_backups and database_backup_schedule. */
@Injectable()
export class DatabaseBackupsRepository extends InstanceRepository {
  constructor(db: Db) {
    super(db);
  }

  async insert(b: { fileName: string; engine: string; trigger: string; instanceId: string; userId: string | null }): Promise<BackupRecord> {
    const [row] = await this.rows<BackupRecord>(
      `INSERT INTO database_backups (file_name, engine, trigger, instance_id, requested_by_user_id) VALUES ($1, $2, $3, $4, $5) RETURNING ${COLUMNS}`,
      [b.fileName, b.engine, b.trigger, b.instanceId, b.userId],
    );
    return row;
  }

  async finish(
    id: string,
    r: { status: 'succeeded' | 'failed'; sizeBytes?: number; durationMs: number; error?: string },
  ): Promise<BackupRecord> {
    const [row] = await this.returning<BackupRecord>(
      `UPDATE database_backups SET status = $2, size_bytes = $3, duration_ms = $4, error = $5, finished_at = now() WHERE id = $1 RETURNING ${COLUMNS}`,
      [id, r.status, r.sizeBytes ?? null, r.durationMs, r.error?.slice(0, 2000) ?? null],
    );
    return row;
  }

  async markDeleted(ids: string[]): Promise<void> {
    if (ids.length) await this.rows(`UPDATE database_backups SET status = 'deleted' WHERE id = ANY($1::uuid[])`, [ids]);
  }

  async list(limit: number): Promise<BackupRecord[]> {
    return this.rows<BackupRecord>(
      `SELECT ${COLUMNS} FROM database_backups WHERE status <> 'deleted' ORDER BY created_at DESC, id DESC LIMIT $1`,
      [limit],
    );
  }

  /** Succeeded scheduled backups, newest first (retention candidates). */
  async scheduled(): Promise<BackupRecord[]> {
    return this.rows<BackupRecord>(
      `SELECT ${COLUMNS} FROM database_backups WHERE trigger = 'scheduled' AND status = 'succeeded' ORDER BY created_at DESC, id DESC`,
    );
  }

  /**
   * Claims the scheduled backup when it is due: a conditional update of the one schedule row, so
   * of several instances ticking together exactly one wins. An unset due time is due now.
   */
  async claimDue(instanceId: string, intervalMinutes: number): Promise<boolean> {
    const rows = await this.returning(
      `UPDATE database_backup_schedule
          SET next_due_at = now() + make_interval(mins => $2), last_claimed_at = now(), last_claimed_by = $1
        WHERE id = 1 AND (next_due_at IS NULL OR next_due_at <= now() OR last_claimed_at + make_interval(mins => $2) <= now()) RETURNING id`,
      [instanceId, intervalMinutes],
    );
    return rows.length > 0;
  }

  async schedule(): Promise<{ nextDueAt: Date | null; lastClaimedAt: Date | null; lastClaimedBy: string | null }> {
    const [row] = await this.rows<{ nextDueAt: Date | null; lastClaimedAt: Date | null; lastClaimedBy: string | null }>(
      `SELECT next_due_at AS "nextDueAt", last_claimed_at AS "lastClaimedAt", last_claimed_by AS "lastClaimedBy" FROM database_backup_schedule WHERE id = 1`,
    );
    return row;
  }

  async serverVersionNum(): Promise<number> {
    const [row] = await this.rows<{ v: string }>(`SELECT current_setting('server_version_num') AS v`);
    return Number(row.v);
  }
}
