import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Per-user secrets and secret proposals (secrets module).
 *
 * - user_secret_definitions: a secret every board user of the company provides for themselves
 *   (`key` unique in the company), e.g. a personal access token.
 * - user_secret_values: one user's value of a definition, encrypted like a local_encrypted secret
 *   version (AES-256-GCM under the instance master key, the row id and version as associated data);
 *   a rotation replaces it and bumps `version`. Never returned.
 * - secret_proposals: an agent (or a board user) proposes a company secret by name; the board fills
 *   in the value (or takes the one the proposer supplied, held encrypted and wiped once decided) and
 *   approves it into a company secret, or rejects it. One pending proposal per name.
 */
export class UserSecretsProposals1763905200000 implements MigrationInterface {
  name = 'UserSecretsProposals1763905200000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE user_secret_definitions (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        company_id uuid NOT NULL REFERENCES companies(id) ON DELETE CASCADE,
        key text NOT NULL,
        name text NOT NULL,
        description text,
        usage_guidance text,
        status text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'archived')),
        created_by_agent_id uuid,
        created_by_user_id text,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE UNIQUE INDEX user_secret_definitions_key ON user_secret_definitions (company_id, key)`);
    await q.query(`
      CREATE TABLE user_secret_values (
        id uuid PRIMARY KEY,
        company_id uuid NOT NULL REFERENCES companies(id) ON DELETE CASCADE,
        definition_id uuid NOT NULL REFERENCES user_secret_definitions(id) ON DELETE CASCADE,
        user_id text NOT NULL,
        version integer NOT NULL DEFAULT 1 CHECK (version > 0),
        ciphertext bytea NOT NULL,
        iv bytea NOT NULL,
        auth_tag bytea NOT NULL,
        key_fingerprint text NOT NULL,
        value_sha256 text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE UNIQUE INDEX user_secret_values_owner ON user_secret_values (definition_id, user_id)`);
    await q.query(`CREATE INDEX user_secret_values_user ON user_secret_values (company_id, user_id)`);
    await q.query(`
      CREATE TABLE secret_proposals (
        id uuid PRIMARY KEY,
        company_id uuid NOT NULL REFERENCES companies(id) ON DELETE CASCADE,
        name text NOT NULL,
        description text,
        reason text,
        status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'approved', 'rejected')),
        proposed_by_agent_id uuid REFERENCES agents(id) ON DELETE SET NULL,
        proposed_by_user_id text,
        run_id uuid,
        issue_id uuid REFERENCES issues(id) ON DELETE SET NULL,
        ciphertext bytea,
        iv bytea,
        auth_tag bytea,
        key_fingerprint text,
        secret_id uuid REFERENCES company_secrets(id) ON DELETE SET NULL,
        decided_by_user_id text,
        decision_note text,
        decided_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE UNIQUE INDEX secret_proposals_pending_name ON secret_proposals (company_id, name) WHERE status = 'pending'`);
    await q.query(`CREATE INDEX secret_proposals_company ON secret_proposals (company_id, status, created_at DESC)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE IF EXISTS secret_proposals`);
    await q.query(`DROP TABLE IF EXISTS user_secret_values`);
    await q.query(`DROP TABLE IF EXISTS user_secret_definitions`);
  }
}
