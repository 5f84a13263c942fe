import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Feedback traces: a board user's vote (up/down, optional note) on agent output (a comment, a
 * document revision, a run), one per user and target. The company's feedback-sharing consent
 * (null = never set) decides which traces are shared. Traces outlive their target (no foreign key
 * on it): the list then shows the vote without its content.
 */
export class FeedbackTraces1763723100000 implements MigrationInterface {
  name = 'FeedbackTraces1763723100000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE companies
        ADD COLUMN feedback_sharing_enabled boolean,
        ADD COLUMN feedback_sharing_consented_at timestamptz,
        ADD COLUMN feedback_sharing_consented_by_user_id text`);
    await q.query(`
      CREATE TABLE feedback_traces (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        company_id uuid NOT NULL REFERENCES companies(id) ON DELETE CASCADE,
        target_type text NOT NULL CHECK (target_type IN ('comment','document_revision','run')),
        target_id uuid NOT NULL,
        vote text NOT NULL CHECK (vote IN ('up','down')),
        note text CHECK (char_length(note) <= 4000),
        issue_id uuid,
        agent_id uuid,
        run_id uuid,
        voter_user_id text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
        updated_at timestamptz NOT NULL DEFAULT clock_timestamp()
      )`);
    await q.query(`CREATE UNIQUE INDEX feedback_traces_one_vote ON feedback_traces (company_id, target_type, target_id, voter_user_id)`);
    await q.query(`CREATE INDEX feedback_traces_company_idx ON feedback_traces (company_id, created_at DESC, id DESC)`);
    await q.query(`CREATE INDEX feedback_traces_issue_idx ON feedback_traces (issue_id) WHERE issue_id IS NOT NULL`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE IF EXISTS feedback_traces`);
    await q.query(`ALTER TABLE companies DROP COLUMN IF EXISTS feedback_sharing_enabled, DROP COLUMN IF EXISTS feedback_sharing_consented_at, DROP COLUMN IF EXISTS feedback_sharing_consented_by_user_id`);
  }
}
