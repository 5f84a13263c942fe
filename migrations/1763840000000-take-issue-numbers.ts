import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `take_issue_numbers(company, count)`: the companies module's issue counter as a database port
 * (src/database/table-owners.ts, DATABASE_PORTS). It advances `companies.issue_counter` by `count`
 * and returns the prefix and the first number taken, so the issues module can number and insert
 * an issue in one statement without writing the companies table itself. The UPDATE takes the
 * company row lock until the caller's transaction ends: numbers are unique and gap-free.
 */
export class TakeIssueNumbers1763840000000 implements MigrationInterface {
  name = 'TakeIssueNumbers1763840000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE FUNCTION take_issue_numbers(company uuid, count int)
      RETURNS TABLE (issue_prefix text, first int)
      LANGUAGE sql VOLATILE AS $fn$
        UPDATE companies SET issue_counter = issue_counter + count WHERE id = company
        RETURNING issue_prefix::text, issue_counter - count
      $fn$`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP FUNCTION IF EXISTS take_issue_numbers(uuid, int)`);
  }
}
