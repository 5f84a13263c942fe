import { Module, OnModuleInit } from '@nestjs/common';
import { Db } from '../../database/db.service';
import { IssueReadContributions } from '../issues/issue-read-contributions';
import { attachmentSummariesOf } from './attachment.types';
import { IssuesModule } from '../issues/issues.module';
import { AttachmentsController } from './attachments.controller';
import { AttachmentsRepository } from './attachments.repository';
import { AttachmentsService } from './attachments.service';
import { StorageModule } from '../storage/storage.module';
import { AttachmentCompanyRepository } from './attachment-company.repository';

@Module({
  imports: [StorageModule, IssuesModule],
  controllers: [AttachmentsController],
  providers: [AttachmentCompanyRepository, AttachmentsService, AttachmentsRepository],
  exports: [AttachmentsService],
})
export class AttachmentsModule implements OnModuleInit {
  constructor(
    private readonly db: Db,
    private readonly issueReads: IssueReadContributions,
  ) {}

  /** The heartbeat context lists the issue's attachments. */
  onModuleInit(): void {
    this.issueReads.attachments = (issueId) => attachmentSummariesOf(this.db, issueId);
  }
}
