import { Injectable } from '@nestjs/common';
import { CompanyScopedRepository, returningRows } from '../../database/company-scoped.repository';
import { Db } from '../../database/db.service';

/** What a work product write sets. */
export interface WorkProductFields {
  type: string;
  title: string;
  url: string | null;
  attachment_id: string | null;
  status: string | null;
  summary: string | null;
  metadata: Record<string, unknown> | null;
}

export interface WorkProductRow extends WorkProductFields {
  id: string;
  company_id: string;
  issue_id: string;
  created_by_agent_id: string | null;
  created_by_user_id: string | null;
  created_at: Date;
  updated_at: Date;
}

const WORK_PRODUCT_COLUMNS = `id, company_id, issue_id, type, title, url, attachment_id, status, summary, metadata,
  created_by_agent_id, created_by_user_id, created_at, updated_at`;

/**
 * Work products of one issue, oldest first. A function of the caller's `Db` so that the issues
 * read model (GET one issue) can call it without importing the artifacts module (which imports issues).
 */
export function workProductRowsOfIssue(db: Db, issueId: string): Promise<WorkProductRow[]> {
  return db.query<WorkProductRow>(`SELECT ${WORK_PRODUCT_COLUMNS} FROM issue_work_products WHERE issue_id = $1 ORDER BY created_at, id`, [
    issueId,
  ]);
}

/** The issue_work_products table. */
@Injectable()
export class WorkProductsRepository extends CompanyScopedRepository {
  constructor(db: Db) {
    super(db);
  }

  listByIssue(issueId: string): Promise<WorkProductRow[]> {
    return workProductRowsOfIssue(this.db, issueId);
  }

  async findInIssue(issueId: string, id: string): Promise<WorkProductRow | null> {
    const [row] = await this.db.query<WorkProductRow>(
      `SELECT ${WORK_PRODUCT_COLUMNS} FROM issue_work_products WHERE id = $1 AND issue_id = $2`,
      [id, issueId],
    );
    return row ?? null;
  }

  async insert(
    companyId: string,
    issueId: string,
    f: WorkProductFields,
    createdBy: { agentId: string | null; userId: string | null },
  ): Promise<WorkProductRow> {
    const [row] = await this.rows<WorkProductRow>(
      companyId,
      `INSERT INTO issue_work_products (company_id, issue_id, type, title, url, attachment_id, status, summary, metadata, created_by_agent_id, created_by_user_id)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) RETURNING ${WORK_PRODUCT_COLUMNS}`,
      [issueId, f.type, f.title, f.url, f.attachment_id, f.status, f.summary, f.metadata, createdBy.agentId, createdBy.userId],
    );
    return row;
  }

  async update(id: string, f: WorkProductFields): Promise<WorkProductRow> {
    const [row] = await returningRows<WorkProductRow>(
      this.db,
      `UPDATE issue_work_products SET type = $2, title = $3, url = $4, attachment_id = $5, status = $6, summary = $7, metadata = $8,
              updated_at = clock_timestamp()
        WHERE id = $1 RETURNING ${WORK_PRODUCT_COLUMNS}`,
      [id, f.type, f.title, f.url, f.attachment_id, f.status, f.summary, f.metadata],
    );
    return row;
  }

  async delete(id: string): Promise<void> {
    await this.db.query(`DELETE FROM issue_work_products WHERE id = $1`, [id]);
  }

  /** Whether the attachment belongs to the issue. */
  async attachmentOfIssueExists(issueId: string, attachmentId: string): Promise<boolean> {
    // reads issue_attachments (owned by attachments)
    const ok = await this.db.query(`SELECT 1 FROM issue_attachments WHERE id = $1 AND issue_id = $2`, [attachmentId, issueId]);
    return ok.length > 0;
  }
}
