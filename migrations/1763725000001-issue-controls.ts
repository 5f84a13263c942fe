import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Issue controls of the board: subtree pause holds (while a hold on an issue or one of its
 * ancestors is active, wakes for the issue are deferred and checkouts refused; one active hold per
 * root), and interactions (an agent asks a human a question on an issue, with options or free
 * text; a board user answers once).
 */
export class IssueControls1763725000001 implements MigrationInterface {
  name = 'IssueControls1763725000001';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE issue_tree_holds (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        company_id uuid NOT NULL REFERENCES companies(id) ON DELETE CASCADE,
        root_issue_id uuid NOT NULL REFERENCES issues(id) ON DELETE CASCADE,
        reason text,
        created_by_user_id text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        released_at timestamptz,
        released_by_user_id text
      )`);
    await q.query(`CREATE UNIQUE INDEX issue_tree_holds_active_key ON issue_tree_holds (root_issue_id) WHERE released_at IS NULL`);
    await q.query(`CREATE INDEX issue_tree_holds_company_idx ON issue_tree_holds (company_id, created_at DESC)`);
    await q.query(`
      CREATE TABLE issue_interactions (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        company_id uuid NOT NULL REFERENCES companies(id) ON DELETE CASCADE,
        issue_id uuid NOT NULL REFERENCES issues(id) ON DELETE CASCADE,
        kind text NOT NULL DEFAULT 'question' CHECK (kind IN ('question')),
        asked_by_agent_id uuid NOT NULL REFERENCES agents(id) ON DELETE CASCADE,
        run_id uuid,
        prompt text NOT NULL,
        options jsonb,
        allow_free_text boolean NOT NULL,
        status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending','answered')),
        answer_option_id text,
        answer_text text,
        answered_by_user_id text,
        answered_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX issue_interactions_issue_idx ON issue_interactions (issue_id, created_at, id)`);
    await q.query(`CREATE INDEX issue_interactions_pending_idx ON issue_interactions (company_id, created_at) WHERE status = 'pending'`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE IF EXISTS issue_interactions, issue_tree_holds`);
  }
}
