import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Access: human users with password hashes, sessions and board API tokens (only SHA-256 hashes of
 * tokens are stored), login rate-limit counters (in the database so that every instance sees the
 * same counts), one-time board claims, invites, join requests and instance-wide settings.
 * Memberships and grants already exist (foundation); here they get their role check.
 */
export class Access1763700100000 implements MigrationInterface {
  name = 'Access1763700100000';

  async up(q: QueryRunner): Promise<void> {
    // text ids: membership principal ids are text, and the local board may get a profile row ('local-board')
    await q.query(`
      CREATE TABLE users (
        id text PRIMARY KEY DEFAULT gen_random_uuid()::text,
        email text,
        name text NOT NULL,
        slug text NOT NULL,
        image text,
        bio text,
        password_hash text,
        instance_role text CHECK (instance_role IN ('owner','admin')),
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE UNIQUE INDEX users_email_key ON users (lower(email)) WHERE email IS NOT NULL`);
    await q.query(`CREATE UNIQUE INDEX users_slug_key ON users (slug)`);
    await q.query(`CREATE INDEX users_instance_role_idx ON users (instance_role) WHERE instance_role IS NOT NULL`);

    await q.query(`
      CREATE TABLE user_sessions (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        user_id text NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        token_hash text NOT NULL,
        user_agent text,
        expires_at timestamptz NOT NULL,
        revoked_at timestamptz,
        last_seen_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE UNIQUE INDEX user_sessions_hash_key ON user_sessions (token_hash)`);
    await q.query(`CREATE INDEX user_sessions_user_idx ON user_sessions (user_id)`);

    await q.query(`
      CREATE TABLE board_api_tokens (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        user_id text NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        name text NOT NULL,
        token_hash text NOT NULL,
        token_prefix text NOT NULL,
        expires_at timestamptz,
        revoked_at timestamptz,
        last_used_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE UNIQUE INDEX board_api_tokens_hash_key ON board_api_tokens (token_hash)`);
    await q.query(`CREATE INDEX board_api_tokens_user_idx ON board_api_tokens (user_id, created_at DESC)`);

    // fixed-window counters, keyed e.g. 'email:<address>' or 'ip:<address>'
    await q.query(`
      CREATE TABLE auth_rate_limits (
        key text PRIMARY KEY,
        attempts integer NOT NULL,
        window_start timestamptz NOT NULL
      )`);

    await q.query(`
      CREATE TABLE board_claims (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        token_hash text NOT NULL,
        expires_at timestamptz NOT NULL,
        claimed_at timestamptz,
        claimed_by_user_id text REFERENCES users(id) ON DELETE SET NULL,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE UNIQUE INDEX board_claims_hash_key ON board_claims (token_hash)`);

    await q.query(`
      CREATE TABLE instance_settings (
        key text PRIMARY KEY CHECK (key IN ('general','experimental')),
        value jsonb NOT NULL DEFAULT '{}',
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);

    await q.query(`
      ALTER TABLE company_memberships ADD CONSTRAINT company_memberships_role_check
        CHECK (membership_role IN ('owner','admin','member','viewer','operator'))`);
    // the last-owner rule locks a company's active owners
    await q.query(`CREATE INDEX company_memberships_owner_idx ON company_memberships (company_id) WHERE membership_role = 'owner' AND status = 'active'`);

    await q.query(`
      CREATE TABLE invites (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        company_id uuid NOT NULL REFERENCES companies(id) ON DELETE CASCADE,
        token_hash text NOT NULL,
        token_prefix text NOT NULL,
        role text NOT NULL DEFAULT 'member' CHECK (role IN ('owner','admin','member','viewer','operator')),
        allowed_join_types text NOT NULL DEFAULT 'both' CHECK (allowed_join_types IN ('human','agent','both')),
        message text,
        expires_at timestamptz NOT NULL,
        revoked_at timestamptz,
        created_by_user_id text,
        created_by_agent_id uuid,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE UNIQUE INDEX invites_hash_key ON invites (token_hash)`);
    await q.query(`CREATE INDEX invites_company_idx ON invites (company_id, created_at DESC)`);

    await q.query(`
      CREATE TABLE join_requests (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        company_id uuid NOT NULL REFERENCES companies(id) ON DELETE CASCADE,
        invite_id uuid REFERENCES invites(id) ON DELETE SET NULL,
        request_type text NOT NULL CHECK (request_type IN ('human','agent')),
        status text NOT NULL DEFAULT 'pending_approval' CHECK (status IN ('pending_approval','approved','rejected')),
        requesting_user_id text,
        agent_name text,
        adapter_type text,
        capabilities text,
        claim_secret_hash text,
        api_key_claimed_at timestamptz,
        created_agent_id uuid REFERENCES agents(id) ON DELETE SET NULL,
        decided_by_user_id text,
        decided_at timestamptz,
        decision_note text,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX join_requests_company_idx ON join_requests (company_id, status, created_at DESC)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE IF EXISTS join_requests, invites, instance_settings, board_claims, auth_rate_limits, board_api_tokens, user_sessions, users CASCADE`);
    await q.query(`DROP INDEX IF EXISTS company_memberships_owner_idx`);
    await q.query(`ALTER TABLE company_memberships DROP CONSTRAINT IF EXISTS company_memberships_role_check`);
  }
}
