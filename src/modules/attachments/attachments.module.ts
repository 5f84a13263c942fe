import { Module, OnModuleInit } from '@nestjs/common';
import { IssueReadContributions } from '../issues/issue-read-contributions';
import { IssuesModule } from '../issues/issues.module';
import { AttachmentsController } from './attachments.controller';
import { AttachmentsRepository } from './attachments.repository';
import { AttachmentsService } from './attachments.service';
import { StorageModule } from '../storage/storage.module';
import { recordCompanies } from '../../common/references/record-company.repository';

@Module({
  imports: [StorageModule, IssuesModule],
  controllers: [AttachmentsController],
  providers: [recordCompanies('attachments'), AttachmentsService, AttachmentsRepository],
  exports: [AttachmentsService],
})
export class AttachmentsModule implements OnModuleInit {
  constructor(
    private readonly attachments: AttachmentsService,
    private readonly issueReads: IssueReadContributions,
  ) {}

  /** The heartbeat context lists the issue's attachments. */
  onModuleInit(): void {
    this.issueReads.attachments = (companyId, issueId) => this.attachments.summariesOf(companyId, issueId);
  }
}
