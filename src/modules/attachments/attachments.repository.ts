import { Injectable } from '@nestjs/common';
import { CompanyScopedRepository } from '../../database/company-scoped.repository';
import { Db } from '../../database/db.service';

export interface AttachmentRow {
  id: string;
  company_id: string;
  issue_id: string;
  issue_comment_id: string | null;
  asset_id: string;
  content_type: string;
  byte_size: number;
  sha256: string;
  storage_key: string;
  original_filename: string | null;
  created_by_agent_id: string | null;
  created_by_user_id: string | null;
  created_at: Date;
  updated_at: Date;
}

/** Attachment columns (alias a) with its asset's (alias s). */
// reads assets (owned by storage): each attachment with its file fields
const ATTACHMENT_SELECT = `SELECT a.id, a.company_id, a.issue_id, a.issue_comment_id, a.asset_id, s.content_type, s.byte_size, s.sha256,
    s.storage_key, s.original_filename, a.created_by_agent_id, a.created_by_user_id, a.created_at, a.updated_at
  FROM issue_attachments a JOIN assets s ON s.id = a.asset_id`;

/**
 * The attachments of an issue, oldest first. A function of the caller's `Db` so that the issues
 * read model can call it without importing the attachments module (which imports issues).
 */
export function attachmentRowsOfIssue(db: Db, issueId: string): Promise<AttachmentRow[]> {
  return db.query<AttachmentRow>(`${ATTACHMENT_SELECT} WHERE a.issue_id = $1 ORDER BY a.created_at, a.id`, [issueId]);
}

/** The issue_attachments table (each row with its asset's file fields). */
@Injectable()
export class AttachmentsRepository extends CompanyScopedRepository {
  constructor(db: Db) {
    super(db);
  }

  /** An attachment by id, whatever its company (the caller checks access). */
  async findById(attachmentId: string): Promise<AttachmentRow | null> {
    const [row] = await this.db.query<AttachmentRow>(`${ATTACHMENT_SELECT} WHERE a.id = $1`, [attachmentId]);
    return row ?? null;
  }

  listByIssue(issueId: string): Promise<AttachmentRow[]> {
    return attachmentRowsOfIssue(this.db, issueId);
  }

  /** Whether the comment belongs to the issue (and the company). */
  async commentOfIssueExists(companyId: string, issueId: string, issueCommentId: string): Promise<boolean> {
    // reads issue_comments (owned by issues)
    const ok = await this.db.query(`SELECT 1 FROM issue_comments WHERE id = $1 AND issue_id = $2 AND company_id = $3`, [
      issueCommentId,
      issueId,
      this.scope(companyId),
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
