import { Injectable } from '@nestjs/common';
import { ActivityRecorder } from '../../common/activity/activity-recorder.service';
import type { Actor } from '../../common/auth/actor';
import { forbidden, notFound } from '../../common/errors/domain-error';
import { contentTypeAllowed, UploadedFile } from '../../common/http/file-upload';
import { isUuid } from '../../common/http/uuid';
import { AppConfig } from '../../config/app-config';
import { IssueComments } from '../issues/issue-comments.service';
import { IssueStore } from '../issues/issue-store.service';
import { AssetsService } from '../storage/assets.service';
import { AttachmentRecord, attachmentSummaries, effectiveContentType, toAttachmentResponse } from './attachment.types';
import { attachmentError } from './attachments.errors';
import { AttachmentsRepository } from './attachments.repository';
import { AttachmentResponseDto } from './dto/attachment.dto';

/** Files attached to issues (and optionally a comment of the issue); bytes in storage via an asset row. */
@Injectable()
export class AttachmentsService {
  constructor(
    private readonly attachments: AttachmentsRepository,
    private readonly config: AppConfig,
    private readonly issues: IssueStore,
    private readonly assets: AssetsService,
    private readonly activity: ActivityRecorder,
    private readonly comments: IssueComments,
  ) {}

  /** Upload rules: one non-empty file within the size limit (interceptor), an allowed type, a comment of this issue. */
  async upload(
    actor: Actor,
    companyId: string,
    issueRef: string,
    file: UploadedFile,
    issueCommentId?: string,
  ): Promise<AttachmentResponseDto> {
    const issue = await this.issues.findByRef(companyId, issueRef);
    if (!issue) throw notFound('Issue');
    const contentType = (file.mimetype || 'application/octet-stream').toLowerCase();
    const filename = file.originalname ? file.originalname.slice(0, 255) : null;
    if (!contentTypeAllowed(effectiveContentType(contentType, filename), this.config.allowedAttachmentTypes)) {
      throw attachmentError('attachment_type_not_allowed', `Content type ${contentType} is not allowed for attachments`, {
        contentType,
        allowedTypes: this.config.allowedAttachmentTypes,
      });
    }
    if (issueCommentId) {
      if (!(await this.comments.existsInIssue(companyId, issue.id, issueCommentId)))
        throw attachmentError('invalid_issue_comment', 'issueCommentId must be a comment of the same issue', { field: 'issueCommentId' });
    }
    const asset = await this.assets.create({
      companyId,
      kind: 'attachment',
      contentType,
      data: file.buffer,
      originalFilename: filename,
      actor,
    });
    const id = await this.attachments.insert(companyId, {
      issueId: issue.id,
      issueCommentId: issueCommentId ?? null,
      assetId: asset.id,
      createdByAgentId: asset.createdByAgentId,
      createdByUserId: asset.createdByUserId,
    });
    const row = await this.attachments.findInCompany(companyId, id);
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

  async list(routeCompanyId: string | undefined, issueRef: string): Promise<AttachmentResponseDto[]> {
    const issue = await this.issues.load(routeCompanyId, issueRef);
    const rows = await this.attachments.listByIssue(issue.companyId, issue.id);
    return rows.map(toAttachmentResponse);
  }

  /** The attachment of the route's company (resolved and checked by the guard; undefined when it knows no such attachment): 404 otherwise. */
  async load(companyId: string | undefined, attachmentId: string): Promise<AttachmentRecord> {
    const row = companyId && isUuid(attachmentId) ? await this.attachments.findInCompany(companyId, attachmentId) : null;
    if (!row) throw notFound('Attachment');
    return row;
  }

  /** Board callers or the uploading agent. The bytes go once the transaction commits. */
  async remove(actor: Actor, companyId: string | undefined, attachmentId: string): Promise<AttachmentResponseDto> {
    const row = await this.load(companyId, attachmentId);
    if (actor.kind === 'agent' && row.createdByAgentId !== actor.agentId) {
      throw forbidden('Only the board or the uploader may delete an attachment', { reason: 'deny_unsupported_action' });
    }
    const asset = await this.assets.findInCompany(row.companyId, row.assetId);
    if (!asset) throw notFound('Attachment'); // deleted concurrently
    await this.assets.remove(asset); // cascades to the attachment row
    await this.activity.record({
      companyId: row.companyId,
      action: 'issue.attachment_deleted',
      entityType: 'issue',
      entityId: row.issueId,
      actor,
      details: { attachmentId: row.id, originalFilename: row.originalFilename },
    });
    return toAttachmentResponse(row);
  }

  /** Whether the attachment belongs to the issue of the company (a work product may name it). */
  async existsInIssue(companyId: string, issueId: string, attachmentId: string): Promise<boolean> {
    return this.attachments.existsInIssue(companyId, issueId, attachmentId);
  }

  /** Compact attachment list of an issue of the company (heartbeat context). */
  async summariesOf(companyId: string, issueId: string) {
    return attachmentSummaries(await this.attachments.listByIssue(companyId, issueId));
  }
}
