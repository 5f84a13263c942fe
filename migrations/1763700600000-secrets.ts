import { MigrationInterface, QueryRunner } from 'typeorm';

/** Rows of `table` are written once: the database refuses UPDATE (deletes still cascade). */
async function refuseUpdates(q: QueryRunner, table: string, message: string): Promise<void> {
  await q.query(`
    CREATE FUNCTION ${table}_immutable() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN RAISE EXCEPTION '${message}'; END $$`);
  await q.query(`CREATE TRIGGER ${table}_no_update BEFORE UPDATE ON ${table} FOR EACH ROW EXECUTE FUNCTION ${table}_immutable()`);
}

/** Secrets: company secrets, their immutable encrypted versions, and the security audit trail of value reads. */
export class Secrets1763700600000 implements MigrationInterface {
  name = 'Secrets1763700600000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE company_secrets (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        company_id uuid NOT NULL REFERENCES companies(id) ON DELETE CASCADE,
        name text NOT NULL,
        provider text NOT NULL,
        external_ref text,
        latest_version integer NOT NULL DEFAULT 1 CHECK (latest_version >= 1),
        description text,
        created_by_agent_id uuid,
        created_by_user_id text,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE UNIQUE INDEX company_secrets_name_key ON company_secrets (company_id, name)`);
    await q.query(`CREATE INDEX company_secrets_company_created_idx ON company_secrets (company_id, created_at DESC)`);

    // one row per version; only ciphertext (or an external reference) and a SHA-256 of the value
    await q.query(`
      CREATE TABLE company_secret_versions (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        secret_id uuid NOT NULL REFERENCES company_secrets(id) ON DELETE CASCADE,
        company_id uuid NOT NULL REFERENCES companies(id) ON DELETE CASCADE,
        version integer NOT NULL CHECK (version >= 1),
        provider text NOT NULL,
        external_ref text,
        ciphertext bytea,
        iv bytea,
        auth_tag bytea,
        key_fingerprint text,
        value_sha256 text NOT NULL,
        created_by_agent_id uuid,
        created_by_user_id text,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE UNIQUE INDEX company_secret_versions_key ON company_secret_versions (secret_id, version)`);
    await refuseUpdates(q, 'company_secret_versions', 'secret versions are immutable');

    // security audit trail: outlives the secret (no foreign key to it), append-only
    await q.query(`
      CREATE TABLE secret_access_events (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        company_id uuid NOT NULL REFERENCES companies(id) ON DELETE CASCADE,
        secret_id uuid NOT NULL,
        secret_name text NOT NULL,
        binding_key text NOT NULL,
        version integer NOT NULL,
        action text NOT NULL DEFAULT 'value_read',
        agent_id uuid NOT NULL,
        run_id uuid,
        credential_source text NOT NULL,
        credential_id text,
        request_id text,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX secret_access_events_company_idx ON secret_access_events (company_id, created_at DESC)`);
    await q.query(`CREATE INDEX secret_access_events_secret_idx ON secret_access_events (secret_id, created_at DESC)`);
    await refuseUpdates(q, 'secret_access_events', 'secret_access_events is append-only');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE IF EXISTS secret_access_events, company_secret_versions, company_secrets CASCADE`);
    await q.query(`DROP FUNCTION IF EXISTS secret_access_events_immutable()`);
    await q.query(`DROP FUNCTION IF EXISTS company_secret_versions_immutable()`);
  }
}
