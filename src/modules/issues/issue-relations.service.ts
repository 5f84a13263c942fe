import { Injectable } from '@nestjs/common';
import { unprocessable } from '../../common/errors/domain-error';
import { isUuid } from '../../common/http/uuid';

/** isUuid without type narrowing (refs are strings either way). */
const looksLikeUuid = (s: string): boolean => isUuid(s);
import { Db } from '../../database/db.service';
import { IssueRow } from './issue.types';

/**
 * Placement rules that span several issues: blockers (relation type `blocks`: same company, no
 * self-block, no cycle) and parents (same company, no cycle). Cycle checks take a per-company
 * transaction-scoped advisory lock, so two concurrent edits cannot each close half of a cycle.
 */
@Injectable()
export class IssueRelations {
  constructor(private readonly db: Db) {}

  private async lockGraph(companyId: string): Promise<void> {
    await this.db.query(`SELECT pg_advisory_xact_lock(hashtext('issue_graph:' || $1))`, [companyId]);
  }

  /** UUIDs or identifiers to ids of issues of the company; 422 naming the field otherwise. */
  async resolveIds(companyId: string, refs: string[], field: string): Promise<string[]> {
    const unique = [...new Set(refs)];
    if (!unique.length) return [];
    const uuids = unique.filter(looksLikeUuid);
    const idents = unique.filter((r) => !looksLikeUuid(r)).map((r) => r.toUpperCase());
    const rows = await this.db.query<{ id: string; identifier: string }>(
      `SELECT id, identifier FROM issues WHERE company_id = $1 AND (id = ANY($2::uuid[]) OR identifier = ANY($3::text[]))`,
      [companyId, uuids, idents],
    );
    const known = new Set(rows.flatMap((r) => [r.id, r.identifier]));
    const missing = unique.filter((r) => !known.has(looksLikeUuid(r) ? r : r.toUpperCase()));
    if (missing.length)
      throw unprocessable(`${field}: unknown issue(s) in this company: ${missing.join(', ')}`, 'invalid_reference', { field });
    return [...new Set(rows.map((r) => r.id))];
  }

  /** Replaces the blockers of `issue` (PATCH semantics). */
  async replaceBlockers(issue: Pick<IssueRow, 'id' | 'company_id'>, refs: string[]): Promise<void> {
    const blockerIds = await this.resolveIds(issue.company_id, refs, 'blockedByIssueIds');
    if (blockerIds.includes(issue.id)) throw unprocessable('An issue cannot block itself', 'blocker_self', { field: 'blockedByIssueIds' });
    await this.lockGraph(issue.company_id);
    if (blockerIds.length) {
      // a cycle exists if a new blocker is already (transitively) blocked by this issue
      const [cycle] = await this.db.query<{ id: string }>(
        `WITH RECURSIVE downstream(id) AS (
           SELECT related_issue_id FROM issue_relations WHERE issue_id = $1 AND type = 'blocks'
           UNION
           SELECT r.related_issue_id FROM issue_relations r JOIN downstream d ON r.issue_id = d.id WHERE r.type = 'blocks')
         SELECT id FROM downstream WHERE id = ANY($2::uuid[]) LIMIT 1`,
        [issue.id, blockerIds],
      );
      if (cycle)
        throw unprocessable('blockedByIssueIds would create a blocking cycle', 'blocker_cycle', {
          field: 'blockedByIssueIds',
          issueId: cycle.id,
        });
    }
    await this.db.query(
      `DELETE FROM issue_relations WHERE related_issue_id = $1 AND type = 'blocks' AND NOT (issue_id = ANY($2::uuid[]))`,
      [issue.id, blockerIds],
    );
    if (blockerIds.length) {
      await this.db.query(
        `INSERT INTO issue_relations (company_id, issue_id, related_issue_id, type)
         SELECT $1, b, $2, 'blocks' FROM unnest($3::uuid[]) AS b
         ON CONFLICT (issue_id, related_issue_id, type) DO NOTHING`,
        [issue.company_id, issue.id, blockerIds],
      );
    }
  }

  /** A parent of the same company that is neither the issue itself nor one of its descendants. */
  async resolveParent(companyId: string, issueId: string | null, ref: string): Promise<string> {
    const [parentId] = await this.resolveIds(companyId, [ref], 'parentId');
    if (!issueId) return parentId;
    if (parentId === issueId) throw unprocessable('An issue cannot be its own parent', 'parent_cycle', { field: 'parentId' });
    await this.lockGraph(companyId);
    const [cycle] = await this.db.query(
      `WITH RECURSIVE up(id, parent_id, depth) AS (
         SELECT id, parent_id, 0 FROM issues WHERE id = $1
         UNION ALL
         SELECT i.id, i.parent_id, up.depth + 1 FROM issues i JOIN up ON i.id = up.parent_id WHERE up.depth < 1000)
       SELECT 1 FROM up WHERE id = $2 LIMIT 1`,
      [parentId, issueId],
    );
    if (cycle) throw unprocessable('parentId would create a parent cycle', 'parent_cycle', { field: 'parentId' });
    return parentId;
  }

  async replaceLabels(issue: Pick<IssueRow, 'id' | 'company_id'>, labelIds: string[]): Promise<void> {
    const ids = [...new Set(labelIds)];
    if (ids.length) {
      const rows = await this.db.query<{ id: string }>(`SELECT id FROM labels WHERE company_id = $1 AND id = ANY($2::uuid[])`, [
        issue.company_id,
        ids,
      ]);
      if (rows.length !== ids.length)
        throw unprocessable('labelIds: unknown label(s) in this company', 'invalid_reference', { field: 'labelIds' });
    }
    await this.db.query(`DELETE FROM issue_labels WHERE issue_id = $1 AND NOT (label_id = ANY($2::uuid[]))`, [issue.id, ids]);
    if (ids.length) {
      await this.db.query(
        `INSERT INTO issue_labels (issue_id, label_id, company_id) SELECT $1, l, $2 FROM unnest($3::uuid[]) AS l ON CONFLICT DO NOTHING`,
        [issue.id, issue.company_id, ids],
      );
    }
  }
}
