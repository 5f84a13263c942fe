import { Injectable } from '@nestjs/common';
import { ActivityRecorder } from '../../common/activity/activity-recorder.service';
import type { Actor } from '../../common/auth/actor';
import { notFound, unprocessable } from '../../common/errors/domain-error';
import { isUuid } from '../../common/http/uuid';
import { Db } from '../../database/db.service';
import { IssueStore } from '../issues/issue-store.service';
import type { IssueRow } from '../issues/issue.types';
import { returning } from '../issues/returning';
import { CreateWorkProductDto, UpdateWorkProductDto, WorkProductResponseDto } from './dto/work-product.dto';
import { toWorkProductResponse, WORK_PRODUCT_COLUMNS, WorkProductRow, workProductsOf } from './work-product.types';

/**
 * Work products: what an issue produced (pull request, branch, preview, artifact, …) as issue-linked
 * records with a type, a title and a URL and/or an attachment of the issue. Type `artifact` feeds
 * the company artifacts view.
 */
@Injectable()
export class WorkProductsService {
  constructor(
    private readonly db: Db,
    private readonly issues: IssueStore,
    private readonly activity: ActivityRecorder,
  ) {}

  async list(actor: Actor, ref: string): Promise<WorkProductResponseDto[]> {
    const issue = await this.issues.load(actor, ref);
    return workProductsOf(this.db, issue.id);
  }

  async get(actor: Actor, ref: string, id: string): Promise<WorkProductResponseDto> {
    const issue = await this.issues.load(actor, ref);
    return toWorkProductResponse(await this.find(issue, id));
  }

  async create(actor: Actor, ref: string, dto: CreateWorkProductDto): Promise<WorkProductResponseDto> {
    const issue = await this.issues.load(actor, ref);
    await this.assertTarget(issue, dto.url ?? null, dto.attachmentId ?? null);
    const [row] = await this.db.query<WorkProductRow>(
      `INSERT INTO issue_work_products (company_id, issue_id, type, title, url, attachment_id, status, summary, metadata, created_by_agent_id, created_by_user_id)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) RETURNING ${WORK_PRODUCT_COLUMNS}`,
      [
        issue.company_id,
        issue.id,
        dto.type,
        dto.title,
        dto.url ?? null,
        dto.attachmentId ?? null,
        dto.status ?? null,
        dto.summary ?? null,
        dto.metadata ?? null,
        actor.kind === 'agent' ? actor.agentId : null,
        actor.kind === 'board' ? actor.userId : null,
      ],
    );
    await this.record(actor, issue, 'issue.work_product_created', row);
    return toWorkProductResponse(row);
  }

  /** Partial; the result must still have a URL or an attachment. */
  async update(actor: Actor, ref: string, id: string, dto: UpdateWorkProductDto): Promise<WorkProductResponseDto> {
    const issue = await this.issues.load(actor, ref);
    const current = await this.find(issue, id);
    const next = {
      type: dto.type ?? current.type,
      title: dto.title ?? current.title,
      url: dto.url !== undefined ? dto.url : current.url,
      attachment_id: dto.attachmentId !== undefined ? dto.attachmentId : current.attachment_id,
      status: dto.status !== undefined ? dto.status : current.status,
      summary: dto.summary !== undefined ? dto.summary : current.summary,
      metadata: dto.metadata !== undefined ? dto.metadata : current.metadata,
    };
    await this.assertTarget(issue, next.url, next.attachment_id);
    const [row] = await returning<WorkProductRow>(
      this.db,
      `UPDATE issue_work_products SET type = $2, title = $3, url = $4, attachment_id = $5, status = $6, summary = $7, metadata = $8,
              updated_at = clock_timestamp()
        WHERE id = $1 RETURNING ${WORK_PRODUCT_COLUMNS}`,
      [current.id, next.type, next.title, next.url, next.attachment_id, next.status, next.summary, next.metadata],
    );
    await this.record(actor, issue, 'issue.work_product_updated', row);
    return toWorkProductResponse(row);
  }

  async remove(actor: Actor, ref: string, id: string): Promise<WorkProductResponseDto> {
    const issue = await this.issues.load(actor, ref);
    const current = await this.find(issue, id);
    await this.db.query(`DELETE FROM issue_work_products WHERE id = $1`, [current.id]);
    await this.record(actor, issue, 'issue.work_product_deleted', current);
    return toWorkProductResponse(current);
  }

  private async find(issue: IssueRow, id: string): Promise<WorkProductRow> {
    const [row] = isUuid(id)
      ? await this.db.query<WorkProductRow>(`SELECT ${WORK_PRODUCT_COLUMNS} FROM issue_work_products WHERE id = $1 AND issue_id = $2`, [
          id,
          issue.id,
        ])
      : [];
    if (!row) throw notFound('Work product');
    return row;
  }

  private async assertTarget(issue: IssueRow, url: string | null, attachmentId: string | null): Promise<void> {
    if (!url && !attachmentId)
      throw unprocessable('A work product needs a url or an attachmentId', 'work_product_target_required', { field: 'url' });
    if (attachmentId) {
      const ok = await this.db.query(`SELECT 1 FROM issue_attachments WHERE id = $1 AND issue_id = $2`, [attachmentId, issue.id]);
      if (!ok.length)
        throw unprocessable('attachmentId must be an attachment of the same issue', 'invalid_attachment', { field: 'attachmentId' });
    }
  }

  private async record(actor: Actor, issue: IssueRow, action: string, w: WorkProductRow): Promise<void> {
    await this.activity.record({
      companyId: issue.company_id,
      action,
      entityType: 'issue',
      entityId: issue.id,
      actor,
      details: { workProductId: w.id, type: w.type, title: w.title, url: w.url, attachmentId: w.attachment_id },
    });
  }
}
