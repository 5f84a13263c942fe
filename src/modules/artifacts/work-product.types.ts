import type { Db } from '../../database/db.service';
import type { WorkProductResponseDto } from './dto/work-product.dto';

export interface WorkProductRow {
  id: string;
  company_id: string;
  issue_id: string;
  type: string;
  title: string;
  url: string | null;
  attachment_id: string | null;
  status: string | null;
  summary: string | null;
  metadata: Record<string, unknown> | null;
  created_by_agent_id: string | null;
  created_by_user_id: string | null;
  created_at: Date;
  updated_at: Date;
}

export const WORK_PRODUCT_COLUMNS = `id, company_id, issue_id, type, title, url, attachment_id, status, summary, metadata,
  created_by_agent_id, created_by_user_id, created_at, updated_at`;

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
    createdAt: new Date(w.created_at).toISOString(),
    updatedAt: new Date(w.updated_at).toISOString(),
  };
}

/** Work products of one issue, oldest first (also used by GET one issue). */
export async function workProductsOf(db: Db, issueId: string): Promise<WorkProductResponseDto[]> {
  const rows = await db.query<WorkProductRow>(
    `SELECT ${WORK_PRODUCT_COLUMNS} FROM issue_work_products WHERE issue_id = $1 ORDER BY created_at, id`,
    [issueId],
  );
  return rows.map(toWorkProductResponse);
}
