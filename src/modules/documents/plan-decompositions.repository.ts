import { Injectable } from '@nestjs/common';
import { CompanyScopedRepository } from '../../database/company-scoped.repository';
import { Db } from '../../database/db.service';
import { recordColumns } from '../../database/row-mapping';

const DECOMPOSITION_COLUMNS = recordColumns(
  'id, company_id, issue_id, document_key, revision_id, revision_number, accepted_by_user_id, child_issue_ids, created_at',
);

export interface PlanDecompositionRecord {
  id: string;
  companyId: string;
  issueId: string;
  documentKey: string;
  revisionId: string;
  revisionNumber: number;
  acceptedByUserId: string;
  childIssueIds: string[];
  createdAt: Date;
}

/** The issue_plan_decompositions table: plans the board accepted, with the child issues made from them. */
@Injectable()
export class PlanDecompositionsRepository extends CompanyScopedRepository {
  constructor(db: Db) {
    super(db);
  }

  /** The acceptance of one revision, if any. */
  ofRevision(companyId: string, issueId: string, revisionId: string): Promise<PlanDecompositionRecord | null> {
    return this.row(
      companyId,
      `SELECT ${DECOMPOSITION_COLUMNS} FROM issue_plan_decompositions WHERE company_id = $1 AND issue_id = $2 AND revision_id = $3`,
      [issueId, revisionId],
    );
  }

  /** Null when the revision was accepted concurrently (unique per issue and revision). */
  async insert(
    companyId: string,
    v: { issueId: string; documentKey: string; revisionId: string; revisionNumber: number; userId: string; childIssueIds: string[] },
  ): Promise<PlanDecompositionRecord | null> {
    return this.row<PlanDecompositionRecord>(
      companyId,
      `INSERT INTO issue_plan_decompositions (company_id, issue_id, document_key, revision_id, revision_number, accepted_by_user_id, child_issue_ids)
       VALUES ($1, $2, $3, $4, $5, $6, $7::uuid[])
       ON CONFLICT (issue_id, revision_id) DO NOTHING RETURNING ${DECOMPOSITION_COLUMNS}`,
      [v.issueId, v.documentKey, v.revisionId, v.revisionNumber, v.userId, v.childIssueIds],
    );
  }

  /** Newest first. */
  listOfIssue(companyId: string, issueId: string): Promise<PlanDecompositionRecord[]> {
    return this.rows(
      companyId,
      `SELECT ${DECOMPOSITION_COLUMNS} FROM issue_plan_decompositions WHERE company_id = $1 AND issue_id = $2 ORDER BY created_at DESC, id DESC`,
      [issueId],
    );
  }
}
