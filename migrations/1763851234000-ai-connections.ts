import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * AI connections: a company's model-provider accounts (Anthropic, OpenAI, Gemini, OpenRouter) that
 * agents are configured from. The API key is a company secret (secret_id); a connection adds the
 * provider, an optional base URL and default model, who owns it (a user's personal connection or
 * one shared by the company) and whether it is that owner's default for the provider (one each).
 */
export class AiConnections1763851234000 implements MigrationInterface {
  name = 'AiConnections1763851234000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE ai_connections (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        company_id uuid NOT NULL REFERENCES companies(id) ON DELETE CASCADE,
        provider text NOT NULL,
        method text NOT NULL DEFAULT 'api_key' CHECK (method IN ('api_key')),
        name text NOT NULL,
        ownership text NOT NULL CHECK (ownership IN ('personal', 'shared')),
        owner_user_id text,
        secret_id uuid REFERENCES company_secrets(id) ON DELETE SET NULL,
        base_url text,
        default_model text,
        is_default boolean NOT NULL DEFAULT false,
        last_test_status text CHECK (last_test_status IN ('pass', 'fail')),
        last_test_message text,
        last_tested_at timestamptz,
        created_by_user_id text,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        CHECK ((ownership = 'personal') = (owner_user_id IS NOT NULL))
      )`);
    await q.query(`CREATE INDEX ai_connections_company ON ai_connections (company_id, created_at)`);
    await q.query(
      `CREATE UNIQUE INDEX ai_connections_one_default ON ai_connections (company_id, provider, coalesce(owner_user_id, '')) WHERE is_default`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE IF EXISTS ai_connections`);
  }
}
