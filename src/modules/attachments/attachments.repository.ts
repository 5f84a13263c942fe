import { Injectable } from '@nestjs/common';
import { CompanyScopedRepository } from '../../database/company-scoped.repository';
import { Db } from '../../database/db.service';

export interface AttachmentRecord {
  id: string;
  companyId: string;
  issueId: string;
  issueCommentId: string | null;
  assetId: string;
  contentType: string;
  byteSize: number;
  sha256: string;
  storageKey: string;
  originalFilename: string | null;
  createdByAgentId: string | null;
  createdByUserId: string | null;
  createdAt: Date;
  updatedAt: Date;
}

/** Attachment columns (alias a) with its asset's (alias s). */
// reads assets (owned by storage; FOREIGN_READS): each attachment with its file fields, in one statement
const ATTACHMENT_SELECT = `SELECT a.id, a.company_id AS "companyId", a.issue_id AS "issueId", a.issue_comment_id AS "issueCommentId",
    a.asset_id AS "assetId", s.content_type AS "contentType", s.byte_size AS "byteSize", s.sha256, s.storage_key AS "storageKey",
    s.original_filename AS "originalFilename", a.created_by_agent_id AS "createdByAgentId", a.created_by_user_id AS "createdByUserId",
    a.created_at AS "createdAt", a.updated_at AS "updatedAt"
  FROM issue_attachments a JOIN assets s ON s.id = a.asset_id`;

/** The issue_attachments table (each row with its asset's file fields). */
@Injectable()
export class AttachmentsRepository extends CompanyScopedRepository {
  constructor(db: Db) {
    super(db);
  }

  /** An attachment by id, whatever its company (the caller checks access). */
  findInCompany(companyId: string, attachmentId: string): Promise<AttachmentRecord | null> {
    return this.row<AttachmentRecord>(companyId, `${ATTACHMENT_SELECT} WHERE a.company_id = $1 AND s.company_id = $1 AND a.id = $2`, [
      attachmentId,
    ]);
  }

  /** The attachments of an issue of the company, oldest first. */
  listByIssue(companyId: string, issueId: string): Promise<AttachmentRecord[]> {
    return this.rows<AttachmentRecord>(
      companyId,
      `${ATTACHMENT_SELECT} WHERE a.company_id = $1 AND a.issue_id = $2 ORDER BY a.created_at, a.id`,
      [issueId],
    );
  }

  /** Whether the attachment belongs to the issue of the company. */
  async existsInIssue(companyId: string, issueId: string, attachmentId: string): Promise<boolean> {
    const ok = await this.rows(companyId, `SELECT 1 FROM issue_attachments WHERE company_id = $1 AND id = $2 AND issue_id = $3`, [
      attachmentId,
      issueId,
    ]);
    return ok.length > 0;
  }

  /** Inserts an attachment row; returns its id. */
  async insert(
    companyId: string,
    a: { issueId: string; issueCommentId: string | null; assetId: string; createdByAgentId: string | null; createdByUserId: string | null },
  ): Promise<string> {
    const [{ id }] = await this.rows<{ id: string }>(
      companyId,
      `INSERT INTO issue_attachments (company_id, issue_id, issue_comment_id, asset_id, created_by_agent_id, created_by_user_id)
       VALUES ($1, $2, $3, $4, $5, $6) RETURNING id`,
      [a.issueId, a.issueCommentId, a.assetId, a.createdByAgentId, a.createdByUserId],
    );
    return id;
  }
}
