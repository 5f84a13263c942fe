import type { Db } from '../../database/db.service';
import { isoRequired } from '../../database/row-mapping';
import { openThreadsOfIssueDocument } from './annotations.repository';
import { PLAN_KEY, toDocumentResponse, toDocumentSummary } from './document.types';
import { documentRowsOfIssue, revisionBody } from './documents.repository';
import type { DocumentResponseDto, DocumentSummaryDto } from './dto/document.dto';

/**
 * What GET one issue shows of its documents: the `plan` document in full and a summary of each
 * document. A plain function over Db so that the issues module can call it without a module cycle.
 */
export async function issueDocumentsView(
  db: Db,
  issueId: string,
): Promise<{ planDocument: DocumentResponseDto | null; documentSummaries: DocumentSummaryDto[] }> {
  const docs = await documentRowsOfIssue(db, issueId);
  const plan = docs.find((d) => d.key === PLAN_KEY);
  let planDocument: DocumentResponseDto | null = null;
  if (plan) {
    const latest = await revisionBody(db, plan.latest_revision_id);
    planDocument = toDocumentResponse(plan, latest!);
  }
  return { planDocument, documentSummaries: docs.map(toDocumentSummary) };
}

/** Open annotation threads of the plan document, for an agent reviewing its plan (heartbeat context). */
export async function planReviewThreads(db: Db, issueId: string): Promise<Array<Record<string, unknown>>> {
  const rows = await openThreadsOfIssueDocument(db, issueId, PLAN_KEY);
  return rows.map((r) => ({
    id: r.id,
    status: r.status,
    anchorState: r.anchor_state,
    quote: r.exact,
    lastActivityAt: isoRequired(r.last_activity_at),
    comments: r.bodies,
  }));
}
