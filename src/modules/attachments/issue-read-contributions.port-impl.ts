import { Injectable, OnModuleInit } from '@nestjs/common';
import { IssueReadContributions } from '../issues/issue-read-contributions.port';
import { AttachmentsService } from './attachments.service';

/** The attachments module's part of the issue read model: the issue's attachments. */
@Injectable()
export class IssueAttachmentReads implements OnModuleInit {
  constructor(
    private readonly attachments: AttachmentsService,
    private readonly issueReads: IssueReadContributions,
  ) {}

  /** The heartbeat context lists the issue's attachments. */
  onModuleInit(): void {
    this.issueReads.attachments = (companyId, issueId) => this.attachments.summariesOf(companyId, issueId);
  }
}
