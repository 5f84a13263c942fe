import { Injectable } from '@nestjs/common';
import { CompanyScopedRepository } from '../../database/company-scoped.repository';
import { Db } from '../../database/db.service';

/** The issue graph: issue_relations (blockers) and the parent links of issues. */
@Injectable()
export class IssueRelationsRepository extends CompanyScopedRepository {
  constructor(db: Db) {
    super(db);
  }

  /** A per-company transaction-scoped advisory lock, taken before cycle checks. */
  async lockGraph(companyId: string): Promise<void> {
    await this.rows(companyId, `SELECT pg_advisory_xact_lock(hashtext('issue_graph:' || $1))`);
  }

  /** Issues of the company whose id is among `uuids` or identifier among `identifiers`. */
  findRefs(companyId: string, uuids: string[], identifiers: string[]): Promise<Array<{ id: string; identifier: string }>> {
    return this.rows<{ id: string; identifier: string }>(
      companyId,
      `SELECT id, identifier FROM issues WHERE company_id = $1 AND (id = ANY($2::uuid[]) OR identifier = ANY($3::text[]))`,
      [uuids, identifiers],
    );
  }

  /** One of `blockerIds` that is already (transitively) blocked by the issue, or null. */
  async blockerCycle(companyId: string, issueId: string, blockerIds: string[]): Promise<string | null> {
    const cycle = await this.row<{ id: string }>(
      companyId,
      `WITH RECURSIVE downstream(id) AS (
           SELECT related_issue_id FROM issue_relations WHERE company_id = $1 AND issue_id = $2 AND type = 'blocks'
           UNION
           SELECT r.related_issue_id FROM issue_relations r JOIN downstream d ON r.issue_id = d.id WHERE r.company_id = $1 AND r.type = 'blocks')
         SELECT id FROM downstream WHERE id = ANY($3::uuid[]) LIMIT 1`,
      [issueId, blockerIds],
    );
    return cycle ? cycle.id : null;
  }

  /** The issue's blockers become exactly `blockerIds`. */
  async replaceBlockers(issue: { id: string; companyId: string }, blockerIds: string[]): Promise<void> {
    await this.rows(
      issue.companyId,
      `DELETE FROM issue_relations WHERE company_id = $1 AND related_issue_id = $2 AND type = 'blocks' AND NOT (issue_id = ANY($3::uuid[]))`,
      [issue.id, blockerIds],
    );
    if (blockerIds.length) {
      await this.rows(
        issue.companyId,
        `INSERT INTO issue_relations (company_id, issue_id, related_issue_id, type)
         SELECT $1, b, $2, 'blocks' FROM unnest($3::uuid[]) AS b
         ON CONFLICT (issue_id, related_issue_id, type) DO NOTHING`,
        [issue.id, blockerIds],
      );
    }
  }

  /** Whether `issueId` is `parentId` or one of its ancestors (making it the parent would close a cycle). */
  async isAncestorOrSelf(companyId: string, issueId: string, parentId: string): Promise<boolean> {
    const cycle = await this.row(
      companyId,
      `WITH RECURSIVE up(id, parent_id, depth) AS (
         SELECT id, parent_id, 0 FROM issues WHERE company_id = $1 AND id = $2
         UNION ALL
         SELECT i.id, i.parent_id, up.depth + 1 FROM issues i JOIN up ON i.id = up.parent_id WHERE i.company_id = $1 AND up.depth < 1000)
       SELECT 1 FROM up WHERE id = $3 LIMIT 1`,
      [parentId, issueId],
    );
    return !!cycle;
  }
}
