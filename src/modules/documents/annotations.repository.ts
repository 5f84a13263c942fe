import { Injectable } from '@nestjs/common';
import { CompanyScopedRepository } from '../../database/company-scoped.repository';
import { Db } from '../../database/db.service';
import { recordColumns } from '../../database/row-mapping';
import type { AnchorSelector, AnchorState } from './anchoring';
import type { Author } from './documents.repository';

export interface AnnotationThreadRecord {
  id: string;
  companyId: string;
  issueId: string;
  documentId: string;
  documentKey: string;
  status: 'open' | 'resolved';
  anchorState: AnchorState;
  baseRevisionId: string;
  baseRevisionNumber: number;
  anchorRevisionId: string;
  anchorRevisionNumber: number;
  originalSelector: Record<string, unknown>;
  selector: AnchorSelector;
  createdByAgentId: string | null;
  createdByUserId: string | null;
  resolvedAt: Date | null;
  resolvedByAgentId: string | null;
  resolvedByUserId: string | null;
  commentCount: number;
  lastActivityAt: Date;
  createdAt: Date;
  updatedAt: Date;
}

/** Thread columns (alias t) with the document key and comment count. */
const THREAD_SELECT = `SELECT ${recordColumns(
  `id, company_id, issue_id, document_id, status, anchor_state, base_revision_id, base_revision_number, anchor_revision_id,
   anchor_revision_number, original_selector, selector, created_by_agent_id, created_by_user_id, resolved_at, resolved_by_agent_id,
   resolved_by_user_id, last_activity_at, created_at, updated_at`,
  't',
)}, d.key AS "documentKey", (SELECT count(*)::int FROM document_annotation_comments c WHERE c.thread_id = t.id) AS "commentCount"
  FROM document_annotation_threads t JOIN issue_documents d ON d.id = t.document_id`;

export interface AnnotationCommentRecord {
  id: string;
  threadId: string;
  body: string;
  authorAgentId: string | null;
  authorUserId: string | null;
  createdAt: Date;
}

const ANNOTATION_COMMENT_COLUMNS = recordColumns('id, thread_id, body, author_agent_id, author_user_id, created_at');

/** An open thread of a document with its comment bodies (heartbeat context). */
export interface ReviewThreadRecord {
  id: string;
  status: string;
  anchorState: string;
  exact: string;
  lastActivityAt: Date;
  bodies: string[];
}

/** Annotation threads of issue documents and their comments. */
@Injectable()
export class AnnotationsRepository extends CompanyScopedRepository {
  constructor(db: Db) {
    super(db);
  }

  /** Open annotation threads of an issue's document, newest activity first (heartbeat context). */
  openThreadsOfIssueDocument(companyId: string, issueId: string, key: string): Promise<ReviewThreadRecord[]> {
    return this.rows<ReviewThreadRecord>(
      companyId,
      `SELECT t.id, t.status, t.anchor_state AS "anchorState", t.selector->'quote'->>'exact' AS exact, t.last_activity_at AS "lastActivityAt",
              array(SELECT c.body FROM document_annotation_comments c WHERE c.thread_id = t.id ORDER BY c.created_at, c.id) AS bodies
         FROM document_annotation_threads t JOIN issue_documents d ON d.id = t.document_id
        WHERE d.company_id = $1 AND d.issue_id = $2 AND d.key = $3 AND t.status = 'open' ORDER BY t.last_activity_at DESC, t.id DESC`,
      [issueId, key],
    );
  }

  /** Threads of a document (of one status unless null), newest activity first. */
  threadsOfDocument(companyId: string, documentId: string, status: string | null): Promise<AnnotationThreadRecord[]> {
    return status === null
      ? this.rows<AnnotationThreadRecord>(
          companyId,
          `${THREAD_SELECT} WHERE t.company_id = $1 AND t.document_id = $2 ORDER BY t.last_activity_at DESC, t.id DESC`,
          [documentId],
        )
      : this.rows<AnnotationThreadRecord>(
          companyId,
          `${THREAD_SELECT} WHERE t.company_id = $1 AND t.document_id = $2 AND t.status = $3 ORDER BY t.last_activity_at DESC, t.id DESC`,
          [documentId, status],
        );
  }

  /** A thread of the document; `lock` takes its row lock. */
  findThread(companyId: string, documentId: string, threadId: string, lock = false): Promise<AnnotationThreadRecord | null> {
    return this.row<AnnotationThreadRecord>(
      companyId,
      `${THREAD_SELECT} WHERE t.company_id = $1 AND t.id = $2 AND t.document_id = $3${lock ? ' FOR UPDATE OF t' : ''}`,
      [threadId, documentId],
    );
  }

  /** A thread anchored at the document's latest revision; returns its id. */
  async insertThread(
    companyId: string,
    t: {
      issueId: string;
      documentId: string;
      revisionId: string;
      revisionNumber: number;
      originalSelector: unknown;
      selector: AnchorSelector;
    },
    by: Pick<Author, 'agentId' | 'userId'>,
  ): Promise<string> {
    const [{ id }] = await this.rows<{ id: string }>(
      companyId,
      `INSERT INTO document_annotation_threads (company_id, issue_id, document_id, base_revision_id, base_revision_number,
         anchor_revision_id, anchor_revision_number, original_selector, selector, created_by_agent_id, created_by_user_id)
       VALUES ($1, $2, $3, $4, $5, $4, $5, $6, $7, $8, $9) RETURNING id`,
      [t.issueId, t.documentId, t.revisionId, t.revisionNumber, t.originalSelector, t.selector, by.agentId, by.userId],
    );
    return id;
  }

  /** Bumps the thread's activity time. */
  async touchThread(companyId: string, threadId: string): Promise<void> {
    await this.rows(
      companyId,
      `UPDATE document_annotation_threads SET last_activity_at = clock_timestamp(), updated_at = clock_timestamp()
        WHERE company_id = $1 AND id = $2`,
      [threadId],
    );
  }

  /** Sets the status; the resolver columns are given for `resolved` and null otherwise. */
  async setThreadStatus(
    companyId: string,
    threadId: string,
    status: string,
    resolved: boolean,
    resolver: { agentId: string | null; userId: string | null },
  ): Promise<void> {
    await this.rows(
      companyId,
      `UPDATE document_annotation_threads
          SET status = $3, resolved_at = CASE WHEN $4 THEN clock_timestamp() END, resolved_by_agent_id = $5, resolved_by_user_id = $6,
              updated_at = clock_timestamp()
        WHERE company_id = $1 AND id = $2`,
      [threadId, status, resolved, resolver.agentId, resolver.userId],
    );
  }

  /** Every thread's selector, rows locked for re-anchoring. */
  selectorsForUpdate(companyId: string, documentId: string): Promise<Array<Pick<AnnotationThreadRecord, 'id' | 'selector'>>> {
    return this.rows<Pick<AnnotationThreadRecord, 'id' | 'selector'>>(
      companyId,
      `SELECT id, selector FROM document_annotation_threads WHERE company_id = $1 AND document_id = $2 FOR UPDATE`,
      [documentId],
    );
  }

  /** Stores a re-anchoring result; an orphaned thread keeps its last anchor revision. */
  async reanchor(
    companyId: string,
    threadId: string,
    state: string,
    selector: unknown,
    revision: { id: string; number: number },
  ): Promise<void> {
    await this.rows(
      companyId,
      `UPDATE document_annotation_threads
            SET anchor_state = $3, selector = $4, anchor_revision_id = CASE WHEN $3 = 'orphaned' THEN anchor_revision_id ELSE $5 END,
                anchor_revision_number = CASE WHEN $3 = 'orphaned' THEN anchor_revision_number ELSE $6 END, updated_at = clock_timestamp()
          WHERE company_id = $1 AND id = $2`,
      [threadId, state, selector, revision.id, revision.number],
    );
  }

  /** Comments of the threads, oldest first. */
  commentsOf(companyId: string, threadIds: string[]): Promise<AnnotationCommentRecord[]> {
    return this.rows<AnnotationCommentRecord>(
      companyId,
      `SELECT ${ANNOTATION_COMMENT_COLUMNS} FROM document_annotation_comments
        WHERE company_id = $1 AND thread_id = ANY($2::uuid[]) ORDER BY created_at, id`,
      [threadIds],
    );
  }

  async insertComment(companyId: string, threadId: string, body: string, by: Author): Promise<AnnotationCommentRecord> {
    const [c] = await this.rows<AnnotationCommentRecord>(
      companyId,
      `INSERT INTO document_annotation_comments (company_id, thread_id, body, author_agent_id, author_user_id, run_id)
       VALUES ($1, $2, $3, $4, $5, $6) RETURNING ${ANNOTATION_COMMENT_COLUMNS}`,
      [threadId, body, by.agentId, by.userId, by.runId],
    );
    return c;
  }
}
