import { AttachmentsService } from '../attachments/attachments.service';
import { Injectable } from '@nestjs/common';
import { ActivityRecorder } from '../../common/activity/activity-recorder.service';
import type { Actor } from '../../common/auth/actor';
import { notFound } from '../../common/errors/domain-error';
import { isUuid } from '../../common/http/uuid';
import { IssueStore } from '../issues/issue-store.service';
import type { IssueRecord } from '../issues/issue.types';
import { artifactError } from './artifacts.errors';
import { CreateWorkProductDto, UpdateWorkProductDto, WorkProductResponseDto } from './dto/work-product.dto';
import { toWorkProductResponse } from './work-product.types';
import { WorkProductRecord, WorkProductsRepository } from './work-products.repository';

/** The fields of the issue (the issues module's record) a work product's rules read. */
type IssueOfProduct = Pick<IssueRecord, 'id' | 'companyId'>;

/**
 * Work products: what an issue produced (pull request, branch, preview, artifact, …) as issue-linked
 * records with a type, a title and a URL and/or an attachment of the issue. Type `artifact` feeds
 * the company artifacts view.
 */
@Injectable()
export class WorkProductsService {
  constructor(
    private readonly workProducts: WorkProductsRepository,
    private readonly issues: IssueStore,
    private readonly activity: ActivityRecorder,
    private readonly attachments: AttachmentsService,
  ) {}

  async list(routeCompanyId: string | undefined, ref: string): Promise<WorkProductResponseDto[]> {
    const issue = await this.issues.load(routeCompanyId, ref);
    return (await this.workProducts.listByIssue(issue.companyId, issue.id)).map(toWorkProductResponse);
  }

  async get(routeCompanyId: string | undefined, ref: string, id: string): Promise<WorkProductResponseDto> {
    const issue = await this.issues.load(routeCompanyId, ref);
    return toWorkProductResponse(await this.find(issue, id));
  }

  async create(actor: Actor, routeCompanyId: string | undefined, ref: string, dto: CreateWorkProductDto): Promise<WorkProductResponseDto> {
    const issue = await this.issues.load(routeCompanyId, ref);
    await this.assertTarget(issue, dto.url ?? null, dto.attachmentId ?? null);
    const row = await this.workProducts.insert(
      issue.companyId,
      issue.id,
      {
        type: dto.type,
        title: dto.title,
        url: dto.url ?? null,
        attachmentId: dto.attachmentId ?? null,
        status: dto.status ?? null,
        summary: dto.summary ?? null,
        metadata: dto.metadata ?? null,
      },
      { agentId: actor.kind === 'agent' ? actor.agentId : null, userId: actor.kind === 'board' ? actor.userId : null },
    );
    await this.record(actor, issue, 'issue.work_product_created', row);
    return toWorkProductResponse(row);
  }

  /** Partial; the result must still have a URL or an attachment. */
  async update(
    actor: Actor,
    routeCompanyId: string | undefined,
    ref: string,
    id: string,
    dto: UpdateWorkProductDto,
  ): Promise<WorkProductResponseDto> {
    const issue = await this.issues.load(routeCompanyId, ref);
    const current = await this.find(issue, id);
    const next = {
      type: dto.type ?? current.type,
      title: dto.title ?? current.title,
      url: dto.url !== undefined ? dto.url : current.url,
      attachmentId: dto.attachmentId !== undefined ? dto.attachmentId : current.attachmentId,
      status: dto.status !== undefined ? dto.status : current.status,
      summary: dto.summary !== undefined ? dto.summary : current.summary,
      metadata: dto.metadata !== undefined ? dto.metadata : current.metadata,
    };
    await this.assertTarget(issue, next.url, next.attachmentId);
    const row = await this.workProducts.update(issue.companyId, current.id, next);
    await this.record(actor, issue, 'issue.work_product_updated', row);
    return toWorkProductResponse(row);
  }

  async remove(actor: Actor, routeCompanyId: string | undefined, ref: string, id: string): Promise<WorkProductResponseDto> {
    const issue = await this.issues.load(routeCompanyId, ref);
    const current = await this.find(issue, id);
    await this.workProducts.delete(issue.companyId, current.id);
    await this.record(actor, issue, 'issue.work_product_deleted', current);
    return toWorkProductResponse(current);
  }

  private async find(issue: IssueOfProduct, id: string): Promise<WorkProductRecord> {
    const row = isUuid(id) ? await this.workProducts.findInIssue(issue.companyId, issue.id, id) : null;
    if (!row) throw notFound('Work product');
    return row;
  }

  private async assertTarget(issue: IssueOfProduct, url: string | null, attachmentId: string | null): Promise<void> {
    if (!url && !attachmentId)
      throw artifactError('work_product_target_required', 'A work product needs a url or an attachmentId', { field: 'url' });
    if (attachmentId && !(await this.attachments.existsInIssue(issue.companyId, issue.id, attachmentId)))
      throw artifactError('invalid_attachment', 'attachmentId must be an attachment of the same issue', { field: 'attachmentId' });
  }

  private async record(actor: Actor, issue: IssueOfProduct, action: string, w: WorkProductRecord): Promise<void> {
    await this.activity.record({
      companyId: issue.companyId,
      action,
      entityType: 'issue',
      entityId: issue.id,
      actor,
      details: { workProductId: w.id, type: w.type, title: w.title, url: w.url, attachmentId: w.attachmentId },
    });
  }
}
