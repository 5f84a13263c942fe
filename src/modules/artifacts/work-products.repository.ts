import { Injectable } from '@nestjs/common';
import { CompanyScopedRepository } from '../../database/company-scoped.repository';
import { Db } from '../../database/db.service';
import { recordColumns } from '../../database/row-mapping';

/** What a work product write sets. */
export interface WorkProductFields {
  type: string;
  title: string;
  url: string | null;
  attachmentId: string | null;
  status: string | null;
  summary: string | null;
  metadata: Record<string, unknown> | null;
}

export interface WorkProductRecord extends WorkProductFields {
  id: string;
  companyId: string;
  issueId: string;
  createdByAgentId: string | null;
  createdByUserId: string | null;
  createdAt: Date;
  updatedAt: Date;
}

const WORK_PRODUCT_COLUMNS = recordColumns(`id, company_id, issue_id, type, title, url, attachment_id, status, summary, metadata,
  created_by_agent_id, created_by_user_id, created_at, updated_at`);

/** The issue_work_products table. */
@Injectable()
export class WorkProductsRepository extends CompanyScopedRepository {
  constructor(db: Db) {
    super(db);
  }

  /** Work products of one issue of the company, oldest first (also used by GET one issue). */
  listByIssue(companyId: string, issueId: string): Promise<WorkProductRecord[]> {
    return this.rows<WorkProductRecord>(
      companyId,
      `SELECT ${WORK_PRODUCT_COLUMNS} FROM issue_work_products WHERE company_id = $1 AND issue_id = $2 ORDER BY created_at, id`,
      [issueId],
    );
  }

  findInIssue(companyId: string, issueId: string, id: string): Promise<WorkProductRecord | null> {
    return this.row<WorkProductRecord>(
      companyId,
      `SELECT ${WORK_PRODUCT_COLUMNS} FROM issue_work_products WHERE company_id = $1 AND id = $2 AND issue_id = $3`,
      [id, issueId],
    );
  }

  async insert(
    companyId: string,
    issueId: string,
    f: WorkProductFields,
    createdBy: { agentId: string | null; userId: string | null },
  ): Promise<WorkProductRecord> {
    const [row] = await this.rows<WorkProductRecord>(
      companyId,
      `INSERT INTO issue_work_products (company_id, issue_id, type, title, url, attachment_id, status, summary, metadata, created_by_agent_id, created_by_user_id)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) RETURNING ${WORK_PRODUCT_COLUMNS}`,
      [issueId, f.type, f.title, f.url, f.attachmentId, f.status, f.summary, f.metadata, createdBy.agentId, createdBy.userId],
    );
    return row;
  }

  async update(companyId: string, id: string, f: WorkProductFields): Promise<WorkProductRecord> {
    const [row] = await this.returning<WorkProductRecord>(
      companyId,
      `UPDATE issue_work_products SET type = $3, title = $4, url = $5, attachment_id = $6, status = $7, summary = $8, metadata = $9,
              updated_at = clock_timestamp()
        WHERE company_id = $1 AND id = $2 RETURNING ${WORK_PRODUCT_COLUMNS}`,
      [id, f.type, f.title, f.url, f.attachmentId, f.status, f.summary, f.metadata],
    );
    return row;
  }

  async delete(companyId: string, id: string): Promise<void> {
    await this.rows(companyId, `DELETE FROM issue_work_products WHERE company_id = $1 AND id = $2`, [id]);
  }
}
