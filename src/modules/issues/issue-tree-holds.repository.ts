import { Injectable } from '@nestjs/common';
import { CompanyScopedRepository } from '../../database/company-scoped.repository';
import { Db } from '../../database/db.service';
import { recordColumns } from '../../database/row-mapping';

/** A subtree pause hold, with the identifier of its root issue. */
export interface TreeHoldRecord {
  id: string;
  companyId: string;
  rootIssueId: string;
  rootIdentifier: string;
  reason: string | null;
  createdByUserId: string;
  createdAt: Date;
  releasedAt: Date | null;
  releasedByUserId: string | null;
}

/** Ancestors are followed at most this deep (the issue tree is far shallower; a guard, not a rule). */
const MAX_DEPTH = 100;

/** SQL: the issue `$2` and its ancestors as `chain(id, depth)`, within company `$1`. */
const CHAIN = `WITH RECURSIVE chain(id, parent_id, depth) AS (
    SELECT id, parent_id, 0 FROM issues WHERE id = $2 AND company_id = $1
    UNION ALL
    SELECT i.id, i.parent_id, c.depth + 1 FROM issues i JOIN chain c ON i.id = c.parent_id WHERE c.depth < ${MAX_DEPTH}
  )`;

/** The issue_tree_holds table: subtree pause holds of the board. */
@Injectable()
export class IssueTreeHoldsRepository extends CompanyScopedRepository {
  constructor(db: Db) {
    super(db);
  }

  /** The active hold covering the issue (on it or its nearest held ancestor), or null. */
  covering(companyId: string, issueId: string): Promise<TreeHoldRecord | null> {
    return this.row(
      companyId,
      `${CHAIN}
       SELECT ${recordColumns('id, company_id, root_issue_id, reason, created_by_user_id, created_at, released_at, released_by_user_id', 'h')},
              i.identifier AS "rootIdentifier"
         FROM chain c JOIN issue_tree_holds h ON h.root_issue_id = c.id AND h.released_at IS NULL
         JOIN issues i ON i.id = h.root_issue_id
        WHERE h.company_id = $1
        ORDER BY c.depth LIMIT 1`,
      [issueId],
    );
  }

  /** The hold covering an issue of any company (the heartbeat engine asks by issue id only); null for unknown issues. */
  async coveringAnyCompany(issueId: string): Promise<string | null> {
    const row = await this.unscopedRow<{ id: string }>(
      "the heartbeat engine's hold probe asks by issue id only (the hook it declares carries no company); the issue's company follows its parent chain",
      `WITH RECURSIVE chain(id, parent_id, depth) AS (
          SELECT id, parent_id, 0 FROM issues WHERE id = $1
          UNION ALL
          SELECT i.id, i.parent_id, c.depth + 1 FROM issues i JOIN chain c ON i.id = c.parent_id WHERE c.depth < ${MAX_DEPTH}
        )
       SELECT h.id FROM chain c JOIN issue_tree_holds h ON h.root_issue_id = c.id AND h.released_at IS NULL LIMIT 1`,
      [issueId],
    );
    return row?.id ?? null;
  }

  /** A new active hold; null when the root already has one (unique partial index). */
  async insert(companyId: string, rootIssueId: string, userId: string, reason: string | null): Promise<TreeHoldRecord | null> {
    const [row] = await this.rows<{ id: string }>(
      companyId,
      `INSERT INTO issue_tree_holds (company_id, root_issue_id, created_by_user_id, reason) VALUES ($1, $2, $3, $4)
       ON CONFLICT (root_issue_id) WHERE released_at IS NULL DO NOTHING RETURNING id`,
      [rootIssueId, userId, reason],
    );
    return row ? this.covering(companyId, rootIssueId) : null;
  }

  /** Releases the active hold rooted at the issue; null when there is none. */
  async release(companyId: string, rootIssueId: string, userId: string): Promise<{ id: string } | null> {
    const [row] = await this.returning<{ id: string }>(
      companyId,
      `UPDATE issue_tree_holds SET released_at = now(), released_by_user_id = $3
        WHERE company_id = $1 AND root_issue_id = $2 AND released_at IS NULL RETURNING id`,
      [rootIssueId, userId],
    );
    return row ?? null;
  }

  /** The issue and all its descendants (ids), for promoting their deferred wakes. */
  async subtree(companyId: string, rootIssueId: string): Promise<string[]> {
    const rows = await this.rows<{ id: string }>(
      companyId,
      `WITH RECURSIVE tree(id, depth) AS (
          SELECT id, 0 FROM issues WHERE id = $2 AND company_id = $1
          UNION ALL
          SELECT i.id, t.depth + 1 FROM issues i JOIN tree t ON i.parent_id = t.id WHERE t.depth < ${MAX_DEPTH}
        )
       SELECT id FROM tree`,
      [rootIssueId],
    );
    return rows.map((r) => r.id);
  }
}
