import { Injectable } from '@nestjs/common';
import { CompanyScopedRepository } from '../../database/company-scoped.repository';
import { Db } from '../../database/db.service';
import type { AnchorSelector, AnchorState } from './anchoring';
import type { Author } from './documents.repository';

export interface ThreadRow {
  id: string;
  company_id: string;
  issue_id: string;
  document_id: string;
  document_key: string;
  status: 'open' | 'resolved';
  anchor_state: AnchorState;
  base_revision_id: string;
  base_revision_number: number;
  anchor_revision_id: string;
  anchor_revision_number: number;
  original_selector: Record<string, unknown>;
  selector: AnchorSelector;
  created_by_agent_id: string | null;
  created_by_user_id: string | null;
  resolved_at: Date | null;
  resolved_by_agent_id: string | null;
  resolved_by_user_id: string | null;
  comment_count: number;
  last_activity_at: Date;
  created_at: Date;
  updated_at: Date;
}

/** Thread columns (alias t) with the document key and comment count. */
const THREAD_SELECT = `SELECT t.id, t.company_id, t.issue_id, t.document_id, d.key AS document_key, t.status, t.anchor_state,
    t.base_revision_id, t.base_revision_number, t.anchor_revision_id, t.anchor_revision_number, t.original_selector, t.selector,
    t.created_by_agent_id, t.created_by_user_id, t.resolved_at, t.resolved_by_agent_id, t.resolved_by_user_id,
    (SELECT count(*)::int FROM document_annotation_comments c WHERE c.thread_id = t.id) AS comment_count,
    t.last_activity_at, t.created_at, t.updated_at
  FROM document_annotation_threads t JOIN issue_documents d ON d.id = t.document_id`;

export interface AnnotationCommentRow {
  id: string;
  thread_id: string;
  body: string;
  author_agent_id: string | null;
  author_user_id: string | null;
  created_at: Date;
}

const ANNOTATION_COMMENT_COLUMNS = 'id, thread_id, body, author_agent_id, author_user_id, created_at';

/** An open thread of a document with its comment bodies (heartbeat context). */
export interface ReviewThreadRow {
  id: string;
  status: string;
  anchor_state: string;
  exact: string;
  last_activity_at: Date;
  bodies: string[];
}

/** Annotation threads of issue documents and their comments. */
@Injectable()
export class AnnotationsRepository extends CompanyScopedRepository {
  constructor(db: Db) {
    super(db);
  }

  /** Open annotation threads of an issue's document, newest activity first (heartbeat context). */
  openThreadsOfIssueDocument(companyId: string, issueId: string, key: string): Promise<ReviewThreadRow[]> {
    return this.rows<ReviewThreadRow>(
      companyId,
      `SELECT t.id, t.status, t.anchor_state, t.selector->'quote'->>'exact' AS exact, t.last_activity_at,
              array(SELECT c.body FROM document_annotation_comments c WHERE c.thread_id = t.id ORDER BY c.created_at, c.id) AS bodies
         FROM document_annotation_threads t JOIN issue_documents d ON d.id = t.document_id
        WHERE d.company_id = $1 AND d.issue_id = $2 AND d.key = $3 AND t.status = 'open' ORDER BY t.last_activity_at DESC, t.id DESC`,
      [issueId, key],
    );
  }

  /** Threads of a document (of one status unless null), newest activity first. */
  threadsOfDocument(companyId: string, documentId: string, status: string | null): Promise<ThreadRow[]> {
    return status === null
      ? this.rows<ThreadRow>(
          companyId,
          `${THREAD_SELECT} WHERE t.company_id = $1 AND t.document_id = $2 ORDER BY t.last_activity_at DESC, t.id DESC`,
          [documentId],
        )
      : this.rows<ThreadRow>(
          companyId,
          `${THREAD_SELECT} WHERE t.company_id = $1 AND t.document_id = $2 AND t.status = $3 ORDER BY t.last_activity_at DESC, t.id DESC`,
          [documentId, status],
        );
  }

  /** A thread of the document; `lock` takes its row lock. */
  findThread(companyId: string, documentId: string, threadId: string, lock = false): Promise<ThreadRow | null> {
    return this.row<ThreadRow>(
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
  selectorsForUpdate(companyId: string, documentId: string): Promise<Array<Pick<ThreadRow, 'id' | 'selector'>>> {
    return this.rows<Pick<ThreadRow, 'id' | 'selector'>>(
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
  commentsOf(companyId: string, threadIds: string[]): Promise<AnnotationCommentRow[]> {
    return this.rows<AnnotationCommentRow>(
      companyId,
      `SELECT ${ANNOTATION_COMMENT_COLUMNS} FROM document_annotation_comments
        WHERE company_id = $1 AND thread_id = ANY($2::uuid[]) ORDER BY created_at, id`,
      [threadIds],
    );
  }

  async insertComment(companyId: string, threadId: string, body: string, by: Author): Promise<AnnotationCommentRow> {
    const [c] = await this.rows<AnnotationCommentRow>(
      companyId,
      `INSERT INTO document_annotation_comments (company_id, thread_id, body, author_agent_id, author_user_id, run_id)
       VALUES ($1, $2, $3, $4, $5, $6) RETURNING ${ANNOTATION_COMMENT_COLUMNS}`,
      [threadId, body, by.agentId, by.userId, by.runId],
    );
    return c;
  }
}
