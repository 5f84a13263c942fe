import { isoRequired } from '../../database/row-mapping';
import type { AnnotationsRepository } from './annotations.repository';
import { PLAN_KEY, toDocumentResponse, toDocumentSummary } from './document.types';
import type { DocumentsRepository } from './documents.repository';
import type { DocumentResponseDto, DocumentSummaryDto } from './dto/document.dto';

/**
 * What GET one issue shows of its documents: the `plan` document in full and a summary of each
 * document. Registered as the issues read model's documents part (IssueReadContributions).
 */
export async function issueDocumentsView(
  docRows: DocumentsRepository,
  companyId: string,
  issueId: string,
): Promise<{ planDocument: DocumentResponseDto | null; documentSummaries: DocumentSummaryDto[] }> {
  const docs = await docRows.rowsOfIssue(companyId, issueId);
  const plan = docs.find((d) => d.key === PLAN_KEY);
  let planDocument: DocumentResponseDto | null = null;
  if (plan) {
    const latest = await docRows.revisionBody(companyId, plan.latestRevisionId);
    planDocument = toDocumentResponse(plan, latest!);
  }
  return { planDocument, documentSummaries: docs.map(toDocumentSummary) };
}

/** Open annotation threads of the plan document, for an agent reviewing its plan (heartbeat context). */
export async function planReviewThreads(
  annotations: AnnotationsRepository,
  companyId: string,
  issueId: string,
): Promise<Array<Record<string, unknown>>> {
  const rows = await annotations.openThreadsOfIssueDocument(companyId, issueId, PLAN_KEY);
  return rows.map((r) => ({
    id: r.id,
    status: r.status,
    anchorState: r.anchorState,
    quote: r.exact,
    lastActivityAt: isoRequired(r.lastActivityAt),
    comments: r.bodies,
  }));
}
