import { Module } from '@nestjs/common';
import { IssuesModule } from '../issues/issues.module';
import { AttachmentsController } from './attachments.controller';
import { AttachmentsRepository } from './attachments.repository';
import { AttachmentsService } from './attachments.service';
import { StorageModule } from '../storage/storage.module';
import { recordCompanies } from '../../common/references/record-company.repository';
import { IssueAttachmentReads } from './issue-read-contributions.port-impl';

/**
 * Issue attachments (`issue_attachments`), their files kept through storage, and their part of the
 * issue read model.
 */
@Module({
  imports: [StorageModule, IssuesModule],
  controllers: [AttachmentsController],
  providers: [recordCompanies('attachments'), AttachmentsService, AttachmentsRepository, IssueAttachmentReads],
  exports: [AttachmentsService],
})
export class AttachmentsModule {}
