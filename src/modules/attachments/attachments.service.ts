import { Injectable } from '@nestjs/common';
import { ActivityRecorder } from '../../common/activity/activity-recorder.service';
import type { Actor } from '../../common/auth/actor';
import { CompanyAccessService } from '../../common/auth/company-access.service';
import { DomainError, forbidden, notFound, unprocessable } from '../../common/errors/domain-error';
import { contentTypeAllowed, UploadedFile } from '../../common/http/file-upload';
import { isUuid } from '../../common/http/uuid';
import { AppConfig } from '../../config/app-config';
import { Db } from '../../database/db.service';
import { IssueStore } from '../issues/issue-store.service';
import { AssetsService } from '../storage/assets.service';
import { AssetEntity } from '../storage/asset.entity';
import { ATTACHMENT_SELECT, AttachmentRow, effectiveContentType, toAttachmentResponse } from './attachment.types';
import { AttachmentResponseDto } from './dto/attachment.dto';

/** Files attached to issues (and optionally a comment of the issue); bytes in storage via an asset row. */
@Injectable()
export class AttachmentsService {
  constructor(
    private readonly db: Db,
    private readonly config: AppConfig,
    private readonly issues: IssueStore,
    private readonly assets: AssetsService,
    private readonly access: CompanyAccessService,
    private readonly activity: ActivityRecorder,
  ) {}

  /** Upload rules: one non-empty file within the size limit (interceptor), an allowed type, a comment of this issue. */
  async upload(
    actor: Actor,
    companyId: string,
    issueRef: string,
    file: UploadedFile,
    issueCommentId?: string,
  ): Promise<AttachmentResponseDto> {
    const issue = await this.issues.findByRef(issueRef, { companyId });
    if (!issue) throw notFound('Issue');
    const contentType = (file.mimetype || 'application/octet-stream').toLowerCase();
    const filename = file.originalname ? file.originalname.slice(0, 255) : null;
    if (!contentTypeAllowed(effectiveContentType(contentType, filename), this.config.allowedAttachmentTypes)) {
      throw new DomainError(415, 'attachment_type_not_allowed', `Content type ${contentType} is not allowed for attachments`, {
        contentType,
        allowedTypes: this.config.allowedAttachmentTypes,
      });
    }
    if (issueCommentId) {
      const ok = await this.db.query(`SELECT 1 FROM issue_comments WHERE id = $1 AND issue_id = $2 AND company_id = $3`, [
        issueCommentId,
        issue.id,
        companyId,
      ]);
      if (!ok.length)
        throw unprocessable('issueCommentId must be a comment of the same issue', 'invalid_issue_comment', { field: 'issueCommentId' });
    }
    const asset = await this.assets.create({
      companyId,
      kind: 'attachment',
      contentType,
      data: file.buffer,
      originalFilename: filename,
      actor,
    });
    const [{ id }] = await this.db.query<{ id: string }>(
      `INSERT INTO issue_attachments (company_id, issue_id, issue_comment_id, asset_id, created_by_agent_id, created_by_user_id)
       VALUES ($1, $2, $3, $4, $5, $6) RETURNING id`,
      [companyId, issue.id, issueCommentId ?? null, asset.id, asset.createdByAgentId, asset.createdByUserId],
    );
    const row = await this.find(id);
    await this.activity.record({
      companyId,
      action: 'issue.attachment_added',
      entityType: 'issue',
      entityId: issue.id,
      actor,
      details: {
        attachmentId: id,
        contentType,
        byteSize: asset.byteSize,
        originalFilename: filename,
        issueCommentId: issueCommentId ?? null,
      },
    });
    return toAttachmentResponse(row!);
  }

  async list(actor: Actor, issueRef: string): Promise<AttachmentResponseDto[]> {
    const issue = await this.issues.load(actor, issueRef);
    const rows = await this.db.query<AttachmentRow>(`${ATTACHMENT_SELECT} WHERE a.issue_id = $1 ORDER BY a.created_at, a.id`, [issue.id]);
    return rows.map(toAttachmentResponse);
  }

  /** 404 unknown, 403 another company. */
  async load(actor: Actor, attachmentId: string): Promise<AttachmentRow> {
    const row = await this.find(attachmentId);
    if (!row) throw notFound('Attachment');
    await this.access.assertAccessToKnownCompany(actor, row.company_id);
    return row;
  }

  /** Board callers or the uploading agent. The bytes go once the transaction commits. */
  async remove(actor: Actor, attachmentId: string): Promise<AttachmentResponseDto> {
    const row = await this.load(actor, attachmentId);
    if (actor.kind === 'agent' && row.created_by_agent_id !== actor.agentId) {
      throw forbidden('Only the board or the uploader may delete an attachment', { reason: 'deny_unsupported_action' });
    }
    const asset = await this.db.repo(AssetEntity).findOneByOrFail({ id: row.asset_id });
    await this.assets.remove(asset); // cascades to the attachment row
    await this.activity.record({
      companyId: row.company_id,
      action: 'issue.attachment_deleted',
      entityType: 'issue',
      entityId: row.issue_id,
      actor,
      details: { attachmentId: row.id, originalFilename: row.original_filename },
    });
    return toAttachmentResponse(row);
  }

  private async find(attachmentId: string): Promise<AttachmentRow | null> {
    if (!isUuid(attachmentId)) return null;
    const [row] = await this.db.query<AttachmentRow>(`${ATTACHMENT_SELECT} WHERE a.id = $1`, [attachmentId]);
    return row ?? null;
  }
}
