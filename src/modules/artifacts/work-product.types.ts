import { isoRequired } from '../../database/row-mapping';
import type { WorkProductResponseDto } from './dto/work-product.dto';
import type { WorkProductRow } from './work-products.repository';

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
