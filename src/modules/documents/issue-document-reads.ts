import type { Db } from '../../database/db.service';
import type { DocumentResponseDto, DocumentSummaryDto } from './dto/document.dto';
import { DOCUMENT_COLUMNS, DocumentRow, PLAN_KEY, RevisionRow, toDocumentResponse, toDocumentSummary } from './document.types';

/**
 * What GET one issue shows of its documents: the `plan` document in full and a summary of each
 * document. A plain function over Db so that the issues module can call it without a module cycle.
 */
export async function issueDocumentsView(
  db: Db,
  issueId: string,
): Promise<{ planDocument: DocumentResponseDto | null; documentSummaries: DocumentSummaryDto[] }> {
  const docs = await db.query<DocumentRow>(`SELECT ${DOCUMENT_COLUMNS} FROM issue_documents WHERE issue_id = $1 ORDER BY key`, [issueId]);
  const plan = docs.find((d) => d.key === PLAN_KEY);
  let planDocument: DocumentResponseDto | null = null;
  if (plan) {
    const [latest] = await db.query<RevisionRow>(`SELECT body, change_summary FROM issue_document_revisions WHERE id = $1`, [
      plan.latest_revision_id,
    ]);
    planDocument = toDocumentResponse(plan, latest);
  }
  return { planDocument, documentSummaries: docs.map(toDocumentSummary) };
}

/** Open annotation threads of the plan document, for an agent reviewing its plan (heartbeat context). */
export async function planReviewThreads(db: Db, issueId: string): Promise<Array<Record<string, unknown>>> {
  const rows = await db.query<{
    id: string;
    status: string;
    anchor_state: string;
    exact: string;
    last_activity_at: Date;
    bodies: string[];
  }>(
    `SELECT t.id, t.status, t.anchor_state, t.selector->'quote'->>'exact' AS exact, t.last_activity_at,
            array(SELECT c.body FROM document_annotation_comments c WHERE c.thread_id = t.id ORDER BY c.created_at, c.id) AS bodies
       FROM document_annotation_threads t JOIN issue_documents d ON d.id = t.document_id
      WHERE d.issue_id = $1 AND d.key = $2 AND t.status = 'open' ORDER BY t.last_activity_at DESC, t.id DESC`,
    [issueId, PLAN_KEY],
  );
  return rows.map((r) => ({
    id: r.id,
    status: r.status,
    anchorState: r.anchor_state,
    quote: r.exact,
    lastActivityAt: new Date(r.last_activity_at).toISOString(),
    comments: r.bodies,
  }));
}
