import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Full-text indexes of issues and comments write new entries into the index tree directly
 * (`fastupdate = off`) instead of a pending list. A GIN pending list is read whole by every search
 * until vacuum merges it: after a burst of creates (11,000 issues in the bench) it held 19,000
 * entries, and Postgres, costing that list, turned a search for a rare word from an index lookup
 * (0.2 ms) into a scan of the company's issues (10 ms). Direct writes cost each create a few
 * index insertions instead, and keep searches as fast between vacuums as after one.
 */
export class SearchIndexDirect1763700900000 implements MigrationInterface {
  name = 'SearchIndexDirect1763700900000';

  async up(q: QueryRunner): Promise<void> {
    for (const index of ['issues_search_idx', 'issue_comments_search_idx']) {
      await q.query(`ALTER INDEX ${index} SET (fastupdate = off)`);
      // entries already pending move into the tree now
      await q.query(`SELECT gin_clean_pending_list('${index}'::regclass)`);
    }
  }

  async down(q: QueryRunner): Promise<void> {
    for (const index of ['issues_search_idx', 'issue_comments_search_idx']) await q.query(`ALTER INDEX ${index} RESET (fastupdate)`);
  }
}
