import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Issue search (best match by tiers: identifier, title, text, comments; see IssueListService).
 *
 * - issues.title_vector + issues_title_search_idx: the words of title and identifier on their own.
 *   The title tier could match the weight-A lexemes of search_vector, but Postgres estimates a
 *   weighted query as if it matched every weight: for a word common in descriptions and absent from
 *   titles it expected many title matches, read the list index in order for them and scanned the
 *   whole company. With a vector of their own, title words have statistics of their own.
 * - fastupdate = off on the full-text indexes: entries go into the index tree directly instead of
 *   a pending list. A GIN pending list is read whole by every search until vacuum merges it: after a
 *   burst of creates (11,000 issues in the bench) it held 19,000 entries, and Postgres, costing that
 *   list, turned a search for a rare word from an index lookup (0.2 ms) into a scan of the company's
 *   issues (10 ms). Direct writes cost each create a few index insertions instead.
 */
export class IssueSearch1763700900000 implements MigrationInterface {
  name = 'IssueSearch1763700900000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE issues ADD COLUMN title_vector tsvector GENERATED ALWAYS AS (
        to_tsvector('simple', identifier) || to_tsvector('english', title) || to_tsvector('simple', title)) STORED`);
    await q.query(`CREATE INDEX issues_title_search_idx ON issues USING gin (title_vector) WITH (fastupdate = off)`);
    for (const index of ['issues_search_idx', 'issue_comments_search_idx']) {
      await q.query(`ALTER INDEX ${index} SET (fastupdate = off)`);
      // entries already pending move into the tree now
      await q.query(`SELECT gin_clean_pending_list('${index}'::regclass)`);
    }
    await q.query(`ANALYZE issues`);
  }

  async down(q: QueryRunner): Promise<void> {
    for (const index of ['issues_search_idx', 'issue_comments_search_idx']) await q.query(`ALTER INDEX ${index} RESET (fastupdate)`);
    await q.query(`DROP INDEX IF EXISTS issues_title_search_idx`);
    await q.query(`ALTER TABLE issues DROP COLUMN IF EXISTS title_vector`);
  }
}
