import { Injectable } from '@nestjs/common';
import { InstanceRepository } from '../../database/company-scoped.repository';
import { Db } from '../../database/db.service';

export interface BackupRow {
  id: string;
  file_name: string;
  engine: 'pg_dump' | 'builtin';
  trigger: 'manual' | 'scheduled';
  status: 'running' | 'succeeded' | 'failed' | 'deleted';
  size_bytes: string | null;
  duration_ms: number | null;
  error: string | null;
  instance_id: string;
  requested_by_user_id: string | null;
  created_at: Date;
  finished_at: Date | null;
}

/** Tables database_backups and database_backup_schedule. */
@Injectable()
export class DatabaseBackupsRepository extends InstanceRepository {
  constructor(db: Db) {
    super(db);
  }

  async insert(b: { fileName: string; engine: string; trigger: string; instanceId: string; userId: string | null }): Promise<BackupRow> {
    const [row] = await this.rows<BackupRow>(
      `INSERT INTO database_backups (file_name, engine, trigger, instance_id, requested_by_user_id) VALUES ($1, $2, $3, $4, $5) RETURNING *`,
      [b.fileName, b.engine, b.trigger, b.instanceId, b.userId],
    );
    return row;
  }

  async finish(
    id: string,
    r: { status: 'succeeded' | 'failed'; sizeBytes?: number; durationMs: number; error?: string },
  ): Promise<BackupRow> {
    const [row] = await this.returning<BackupRow>(
      `UPDATE database_backups SET status = $2, size_bytes = $3, duration_ms = $4, error = $5, finished_at = now() WHERE id = $1 RETURNING *`,
      [id, r.status, r.sizeBytes ?? null, r.durationMs, r.error?.slice(0, 2000) ?? null],
    );
    return row;
  }

  async markDeleted(ids: string[]): Promise<void> {
    if (ids.length) await this.rows(`UPDATE database_backups SET status = 'deleted' WHERE id = ANY($1::uuid[])`, [ids]);
  }

  async list(limit: number): Promise<BackupRow[]> {
    return this.rows<BackupRow>(`SELECT * FROM database_backups WHERE status <> 'deleted' ORDER BY created_at DESC, id DESC LIMIT $1`, [
      limit,
    ]);
  }

  /** Succeeded scheduled backups, newest first (retention candidates). */
  async scheduled(): Promise<BackupRow[]> {
    return this.rows<BackupRow>(
      `SELECT * FROM database_backups WHERE trigger = 'scheduled' AND status = 'succeeded' ORDER BY created_at DESC, id DESC`,
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

  async schedule(): Promise<{ next_due_at: Date | null; last_claimed_at: Date | null; last_claimed_by: string | null }> {
    const [row] = await this.rows<{ next_due_at: Date | null; last_claimed_at: Date | null; last_claimed_by: string | null }>(
      `SELECT next_due_at, last_claimed_at, last_claimed_by FROM database_backup_schedule WHERE id = 1`,
    );
    return row;
  }

  async serverVersionNum(): Promise<number> {
    const [row] = await this.rows<{ v: string }>(`SELECT current_setting('server_version_num') AS v`);
    return Number(row.v);
  }
}
