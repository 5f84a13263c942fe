import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Plugins: installed packages (instance level), their job runs (one row per scheduled occurrence,
 * unique, so a cron occurrence fires once across instances) and an event outbox filled by a
 * trigger on activity_log in the same transaction as the activity (nothing lost when a worker or
 * instance dies; delivered in order per plugin and company).
 */
export class Plugins1763722000000 implements MigrationInterface {
  name = 'Plugins1763722000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE plugins (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        plugin_key text NOT NULL UNIQUE,
        version text NOT NULL,
        display_name text NOT NULL,
        description text,
        protocol_version int NOT NULL,
        manifest jsonb NOT NULL,
        source_kind text NOT NULL CHECK (source_kind IN ('local','tarball','npm')),
        source_ref text NOT NULL,
        install_path text NOT NULL,
        status text NOT NULL DEFAULT 'disabled' CHECK (status IN ('enabled','disabled')),
        event_subscriptions text[] NOT NULL DEFAULT '{}',
        config jsonb NOT NULL DEFAULT '{}',
        enabled_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`
      CREATE TABLE plugin_job_runs (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        plugin_id uuid NOT NULL REFERENCES plugins(id) ON DELETE CASCADE,
        job_key text NOT NULL,
        trigger text NOT NULL CHECK (trigger IN ('schedule','manual')),
        scheduled_for timestamptz,
        status text NOT NULL DEFAULT 'running' CHECK (status IN ('running','succeeded','failed')),
        error text,
        result jsonb,
        instance_id text,
        started_at timestamptz NOT NULL DEFAULT clock_timestamp(),
        finished_at timestamptz,
        duration_ms int
      )`);
    await q.query(`CREATE UNIQUE INDEX plugin_job_runs_occurrence_uq ON plugin_job_runs (plugin_id, job_key, scheduled_for) WHERE scheduled_for IS NOT NULL`);
    await q.query(`CREATE INDEX plugin_job_runs_recent_idx ON plugin_job_runs (plugin_id, job_key, started_at DESC)`);
    await q.query(`
      CREATE TABLE plugin_local_folders (
        plugin_id uuid NOT NULL REFERENCES plugins(id) ON DELETE CASCADE,
        company_id uuid NOT NULL REFERENCES companies(id) ON DELETE CASCADE,
        folder_key text NOT NULL,
        path text NOT NULL,
        updated_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (plugin_id, company_id, folder_key)
      )`);
    await q.query(`
      CREATE TABLE plugin_event_outbox (
        id bigserial PRIMARY KEY,
        plugin_id uuid NOT NULL REFERENCES plugins(id) ON DELETE CASCADE,
        company_id uuid NOT NULL REFERENCES companies(id) ON DELETE CASCADE,
        activity_id uuid NOT NULL,
        action text NOT NULL,
        payload jsonb NOT NULL,
        attempts int NOT NULL DEFAULT 0,
        last_error text,
        created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
        delivered_at timestamptz
      )`);
    await q.query(`CREATE INDEX plugin_event_outbox_pending_idx ON plugin_event_outbox (plugin_id, company_id, id) WHERE delivered_at IS NULL`);
    await q.query(`
      CREATE FUNCTION plugin_event_fanout() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        INSERT INTO plugin_event_outbox (plugin_id, company_id, activity_id, action, payload)
        SELECT p.id, NEW.company_id, NEW.id, NEW.action,
               jsonb_build_object('id', NEW.id, 'companyId', NEW.company_id, 'action', NEW.action, 'actorType', NEW.actor_type,
                 'actorId', NEW.actor_id, 'entityType', NEW.entity_type, 'entityId', NEW.entity_id, 'details', NEW.details,
                 'createdAt', NEW.created_at)
        FROM plugins p
        WHERE p.status = 'enabled' AND (NEW.action = ANY (p.event_subscriptions) OR '*' = ANY (p.event_subscriptions));
        RETURN NULL;
      END $$`);
    await q.query(`CREATE TRIGGER activity_log_plugin_events AFTER INSERT ON activity_log FOR EACH ROW EXECUTE FUNCTION plugin_event_fanout()`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TRIGGER IF EXISTS activity_log_plugin_events ON activity_log`);
    await q.query(`DROP FUNCTION IF EXISTS plugin_event_fanout()`);
    await q.query(`DROP TABLE IF EXISTS plugin_event_outbox`);
    await q.query(`DROP TABLE IF EXISTS plugin_local_folders`);
    await q.query(`DROP TABLE IF EXISTS plugin_job_runs`);
    await q.query(`DROP TABLE IF EXISTS plugins`);
  }
}
