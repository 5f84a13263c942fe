import { Injectable } from '@nestjs/common';
import { CompanyScopedRepository } from '../../database/company-scoped.repository';
import { Db } from '../../database/db.service';
import { recordColumns } from '../../database/row-mapping';

export interface DocumentRecord {
  id: string;
  companyId: string;
  issueId: string;
  key: string;
  title: string | null;
  format: string;
  latestRevisionId: string;
  latestRevisionNumber: number;
  lockedAt: Date | null;
  lockedByAgentId: string | null;
  lockedByUserId: string | null;
  createdByAgentId: string | null;
  createdByUserId: string | null;
  updatedByAgentId: string | null;
  updatedByUserId: string | null;
  createdAt: Date;
  updatedAt: Date;
}

const DOCUMENT_COLUMN_LIST = `id, company_id, issue_id, key, title, format, latest_revision_id, latest_revision_number, locked_at,
  locked_by_agent_id, locked_by_user_id, created_by_agent_id, created_by_user_id, updated_by_agent_id, updated_by_user_id,
  created_at, updated_at`;
const DOCUMENT_COLUMNS = recordColumns(DOCUMENT_COLUMN_LIST);

export interface RevisionRecord {
  id: string;
  companyId: string;
  documentId: string;
  revisionNumber: number;
  title: string | null;
  format: string;
  body: string;
  changeSummary: string | null;
  baseRevisionId: string | null;
  restoredFromRevisionId: string | null;
  createdByAgentId: string | null;
  createdByUserId: string | null;
  createdAt: Date;
}

const REVISION_COLUMNS = recordColumns(`id, company_id, document_id, revision_number, title, format, body, change_summary, base_revision_id,
  restored_from_revision_id, created_by_agent_id, created_by_user_id, created_at`);

/** A document's latest body, with its issue (the portability export's read). */
export interface LatestDocument {
  issueId: string;
  key: string;
  title: string | null;
  format: string;
  body: string;
}

/** Who wrote a row: the (agent, user, run) columns every authored row carries. */
export interface Author {
  agentId: string | null;
  userId: string | null;
  runId: string | null;
}

/** A new revision's content (its title is the document's). */
export interface RevisionContent {
  body: string;
  changeSummary: string | null;
  baseRevisionId: string | null;
  restoredFromRevisionId: string | null;
}

/** Issue documents and their immutable revisions. */
@Injectable()
export class DocumentsRepository extends CompanyScopedRepository {
  constructor(db: Db) {
    super(db);
  }

  /** The latest body of every document of a company's issues (snake_case: the portability export reads it as it is). */
  latestOfCompany(companyId: string): Promise<LatestDocument[]> {
    return this.rows(
      companyId,
      `SELECT d.issue_id AS "issueId", d.key, d.title, d.format, r.body FROM issue_documents d JOIN issue_document_revisions r ON r.id = d.latest_revision_id
        WHERE d.company_id = $1 ORDER BY d.issue_id, d.key`,
    );
  }

  /** Every document of an issue, by key. */
  rowsOfIssue(companyId: string, issueId: string): Promise<DocumentRecord[]> {
    return this.rows<DocumentRecord>(
      companyId,
      `SELECT ${DOCUMENT_COLUMNS} FROM issue_documents WHERE company_id = $1 AND issue_id = $2 ORDER BY key`,
      [issueId],
    );
  }

  /** Body and change summary of one revision. */
  revisionBody(companyId: string, revisionId: string): Promise<Pick<RevisionRecord, 'body' | 'changeSummary'> | null> {
    return this.row<RevisionRecord>(
      companyId,
      `SELECT body, change_summary AS "changeSummary" FROM issue_document_revisions WHERE company_id = $1 AND id = $2`,
      [revisionId],
    );
  }

  /** The document of an issue by key; `lock` takes its row lock. */
  find(companyId: string, issueId: string, key: string, lock = false): Promise<DocumentRecord | null> {
    return this.row<DocumentRecord>(
      companyId,
      `SELECT ${DOCUMENT_COLUMNS} FROM issue_documents WHERE company_id = $1 AND issue_id = $2 AND key = $3${lock ? ' FOR UPDATE' : ''}`,
      [issueId, key],
    );
  }

  /** A revision of the document. */
  revision(companyId: string, documentId: string, revisionId: string): Promise<RevisionRecord | null> {
    return this.row<RevisionRecord>(
      companyId,
      `SELECT ${REVISION_COLUMNS} FROM issue_document_revisions WHERE company_id = $1 AND id = $2 AND document_id = $3`,
      [revisionId, documentId],
    );
  }

  /** All documents of an issue with their latest body and change summary, by key. */
  listWithLatest(companyId: string, issueId: string): Promise<Array<DocumentRecord & { body: string; changeSummary: string | null }>> {
    return this.rows<DocumentRecord & { body: string; changeSummary: string | null }>(
      companyId,
      `SELECT ${recordColumns(DOCUMENT_COLUMN_LIST, 'd')}, r.body, r.change_summary AS "changeSummary"
         FROM issue_documents d JOIN issue_document_revisions r ON r.id = d.latest_revision_id
        WHERE d.company_id = $1 AND d.issue_id = $2 ORDER BY d.key`,
      [issueId],
    );
  }

  /** Every revision of the document, newest first. */
  revisionsOf(companyId: string, documentId: string): Promise<RevisionRecord[]> {
    return this.rows<RevisionRecord>(
      companyId,
      `SELECT ${REVISION_COLUMNS} FROM issue_document_revisions WHERE company_id = $1 AND document_id = $2 ORDER BY revision_number DESC`,
      [documentId],
    );
  }

  /** Removes the document (its revisions and threads cascade). */
  async delete(companyId: string, documentId: string): Promise<void> {
    await this.rows(companyId, `DELETE FROM issue_documents WHERE company_id = $1 AND id = $2`, [documentId]);
  }

  async lock(companyId: string, documentId: string, by: { agentId: string | null; userId: string | null }): Promise<DocumentRecord> {
    const [locked] = await this.returning<DocumentRecord>(
      companyId,
      `UPDATE issue_documents SET locked_at = now(), locked_by_agent_id = $3, locked_by_user_id = $4
        WHERE company_id = $1 AND id = $2 RETURNING ${DOCUMENT_COLUMNS}`,
      [documentId, by.agentId, by.userId],
    );
    return locked;
  }

  async unlock(companyId: string, documentId: string): Promise<DocumentRecord> {
    const [unlocked] = await this.returning<DocumentRecord>(
      companyId,
      `UPDATE issue_documents SET locked_at = NULL, locked_by_agent_id = NULL, locked_by_user_id = NULL
        WHERE company_id = $1 AND id = $2 RETURNING ${DOCUMENT_COLUMNS}`,
      [documentId],
    );
    return unlocked;
  }

  /** Inserts a document at revision 1 (whose id is given); null when the key is taken. */
  async insert(
    companyId: string,
    d: { issueId: string; key: string; title: string | null; revisionId: string },
    by: Author,
  ): Promise<DocumentRecord | null> {
    const [doc] = await this.rows<DocumentRecord>(
      companyId,
      `INSERT INTO issue_documents (company_id, issue_id, key, title, latest_revision_id, latest_revision_number,
         created_by_agent_id, created_by_user_id, updated_by_agent_id, updated_by_user_id)
       VALUES ($1, $2, $3, $4, $5, 1, $6, $7, $6, $7)
       ON CONFLICT (issue_id, key) DO NOTHING RETURNING ${DOCUMENT_COLUMNS}`,
      [d.issueId, d.key, d.title, d.revisionId, by.agentId, by.userId],
    );
    return doc ?? null;
  }

  /**
   * Points the document at a new latest revision, only while its latest revision is still
   * `baseRevisionId`; null when another writer got there first. The title changes when `title` is given.
   */
  async advance(
    companyId: string,
    documentId: string,
    baseRevisionId: string | null | undefined,
    next: { revisionId: string; number: number; title: string | null | undefined },
    by: Author,
  ): Promise<DocumentRecord | null> {
    const [updated] = await this.returning<DocumentRecord>(
      companyId,
      `UPDATE issue_documents
          SET latest_revision_id = $4, latest_revision_number = $5, title = CASE WHEN $6 THEN $7 ELSE title END,
              updated_by_agent_id = $8, updated_by_user_id = $9, updated_at = now()
        WHERE company_id = $1 AND id = $2 AND latest_revision_id = $3 RETURNING ${DOCUMENT_COLUMNS}`,
      [documentId, baseRevisionId, next.revisionId, next.number, next.title !== undefined, next.title ?? null, by.agentId, by.userId],
    );
    return updated ?? null;
  }

  async insertRevision(
    doc: Pick<DocumentRecord, 'id' | 'companyId' | 'title'>,
    id: string,
    number: number,
    c: RevisionContent,
    by: Author,
  ): Promise<RevisionRecord> {
    const [r] = await this.rows<RevisionRecord>(
      doc.companyId,
      `INSERT INTO issue_document_revisions (company_id, id, document_id, revision_number, title, format, body, change_summary,
         base_revision_id, restored_from_revision_id, created_by_agent_id, created_by_user_id, run_id)
       VALUES ($1, $2, $3, $4, $5, 'markdown', $6, $7, $8, $9, $10, $11, $12) RETURNING ${REVISION_COLUMNS}`,
      [id, doc.id, number, doc.title, c.body, c.changeSummary, c.baseRevisionId, c.restoredFromRevisionId, by.agentId, by.userId, by.runId],
    );
    return r;
  }

  /** Keys of the issue's documents of the form `<stem>-<n>`. */
  async derivedKeys(companyId: string, issueId: string, stem: string): Promise<string[]> {
    const rows = await this.rows<{ key: string }>(
      companyId,
      `SELECT key FROM issue_documents WHERE company_id = $1 AND issue_id = $2 AND key ~ ('^' || $3 || '-[0-9]+$')`,
      [issueId, stem], // key characters are literal in a regex
    );
    return rows.map((r) => r.key);
  }
}
