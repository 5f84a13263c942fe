import { isoRequired } from '../../database/row-mapping';
import type { WorkProductResponseDto } from './dto/work-product.dto';
import type { WorkProductRecord } from './work-products.repository';

export type { WorkProductRecord } from './work-products.repository';

export function toWorkProductResponse(w: WorkProductRecord): WorkProductResponseDto {
  return {
    id: w.id,
    companyId: w.companyId,
    issueId: w.issueId,
    type: w.type,
    title: w.title,
    url: w.url,
    attachmentId: w.attachmentId,
    contentPath: w.attachmentId ? `/api/attachments/${w.attachmentId}/content` : null,
    status: w.status,
    summary: w.summary,
    metadata: w.metadata,
    createdByAgentId: w.createdByAgentId,
    createdByUserId: w.createdByUserId,
    createdAt: isoRequired(w.createdAt),
    updatedAt: isoRequired(w.updatedAt),
  };
}
