import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * External adapters (instance level): installed packages, whose generation columns every instance
 * polls (a bumped install generation re-fetches the package, a bumped load generation re-imports
 * it), and per-type settings of any type: instance configuration merged into runs, force-disable
 * and version pin.
 */
export class ExternalAdapters1763723200000 implements MigrationInterface {
  name = 'ExternalAdapters1763723200000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE external_adapters (
        type text PRIMARY KEY CHECK (type ~ '^[a-z][a-z0-9_]{1,63}$'),
        package_name text NOT NULL,
        version text NOT NULL,
        label text NOT NULL,
        source_kind text NOT NULL CHECK (source_kind IN ('local','tarball','npm')),
        source_ref text NOT NULL,
        has_ui_parser boolean NOT NULL DEFAULT false,
        install_generation bigint NOT NULL DEFAULT 1,
        load_generation bigint NOT NULL DEFAULT 1,
        installed_by_user_id text,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`
      CREATE TABLE adapter_settings (
        type text PRIMARY KEY,
        config jsonb NOT NULL DEFAULT '{}',
        disabled boolean NOT NULL DEFAULT false,
        disabled_reason text,
        pinned_version text,
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE IF EXISTS adapter_settings, external_adapters`);
  }
}
