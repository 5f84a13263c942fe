import { Module } from '@nestjs/common';
import { IssuesModule } from '../issues/issues.module';
import { AttachmentsController } from './attachments.controller';
import { AttachmentsRepository } from './attachments.repository';
import { AttachmentsService } from './attachments.service';
import { StorageModule } from '../storage/storage.module';

@Module({
  imports: [StorageModule, IssuesModule],
  controllers: [AttachmentsController],
  providers: [AttachmentsService, AttachmentsRepository],
  exports: [AttachmentsService],
})
export class AttachmentsModule {}
