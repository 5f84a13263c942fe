import type { Db } from '../../database/db.service';
import { isoRequired } from '../../database/row-mapping';
import type { WorkProductResponseDto } from './dto/work-product.dto';
import { workProductRowsOfIssue, type WorkProductRow } from './work-products.repository';

export type { WorkProductRow } from './work-products.repository';

export function toWorkProductResponse(w: WorkProductRow): WorkProductResponseDto {
  return {
    id: w.id,
    companyId: w.company_id,
    issueId: w.issue_id,
    type: w.type,
    title: w.title,
    url: w.url,
    attachmentId: w.attachment_id,
    contentPath: w.attachment_id ? `/api/attachments/${w.attachment_id}/content` : null,
    status: w.status,
    summary: w.summary,
    metadata: w.metadata,
    createdByAgentId: w.created_by_agent_id,
    createdByUserId: w.created_by_user_id,
    createdAt: isoRequired(w.created_at),
    updatedAt: isoRequired(w.updated_at),
  };
}

/** Work products of one issue, oldest first (also used by GET one issue). */
export async function workProductsOf(db: Db, issueId: string): Promise<WorkProductResponseDto[]> {
  const rows = await workProductRowsOfIssue(db, issueId);
  return rows.map(toWorkProductResponse);
}
