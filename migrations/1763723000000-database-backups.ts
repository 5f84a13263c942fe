import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Database backups: one row per backup attempt (the file lives in the backup directory of the
 * instance that wrote it), and the schedule row the backup tick claims with a conditional update,
 * so a scheduled backup runs once across instances.
 */
export class DatabaseBackups1763723000000 implements MigrationInterface {
  name = 'DatabaseBackups1763723000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE database_backups (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        file_name text NOT NULL UNIQUE,
        engine text NOT NULL CHECK (engine IN ('pg_dump','builtin')),
        trigger text NOT NULL CHECK (trigger IN ('manual','scheduled')),
        status text NOT NULL DEFAULT 'running' CHECK (status IN ('running','succeeded','failed','deleted')),
        size_bytes bigint,
        duration_ms integer,
        error text,
        instance_id text NOT NULL,
        requested_by_user_id text,
        created_at timestamptz NOT NULL DEFAULT now(),
        finished_at timestamptz
      )`);
    await q.query(`CREATE INDEX database_backups_created_idx ON database_backups (created_at DESC)`);
    await q.query(`
      CREATE TABLE database_backup_schedule (
        id int PRIMARY KEY CHECK (id = 1),
        next_due_at timestamptz,
        last_claimed_at timestamptz,
        last_claimed_by text
      )`);
    await q.query(`INSERT INTO database_backup_schedule (id) VALUES (1)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE IF EXISTS database_backup_schedule, database_backups`);
  }
}
