import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Accepted plan decompositions: the board accepts an issue's `plan` document at one revision and
 * child issues are created from its list items; the record keeps the revision and the children.
 * One acceptance per revision.
 */
export class PlanDecompositions1763725000002 implements MigrationInterface {
  name = 'PlanDecompositions1763725000002';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE issue_plan_decompositions (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        company_id uuid NOT NULL REFERENCES companies(id) ON DELETE CASCADE,
        issue_id uuid NOT NULL REFERENCES issues(id) ON DELETE CASCADE,
        document_key text NOT NULL,
        revision_id uuid NOT NULL,
        revision_number integer NOT NULL,
        accepted_by_user_id text NOT NULL,
        child_issue_ids uuid[] NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE UNIQUE INDEX issue_plan_decompositions_revision_key ON issue_plan_decompositions (issue_id, revision_id)`);
    await q.query(`CREATE INDEX issue_plan_decompositions_issue_idx ON issue_plan_decompositions (issue_id, created_at DESC)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE IF EXISTS issue_plan_decompositions`);
  }
}
