import { Module } from '@nestjs/common';
import { AttachmentsModule } from '../attachments/attachments.module';
import { IssuesModule } from '../issues/issues.module';
import { ArtifactsController } from './artifacts.controller';
import { ArtifactsRepository } from './artifacts.repository';
import { ArtifactsService } from './artifacts.service';
import { WorkProductsController } from './work-products.controller';
import { WorkProductsRepository } from './work-products.repository';
import { WorkProductsService } from './work-products.service';
import { IssueWorkProductReads } from './issue-read-contributions.port-impl';

/**
 * Artifacts and issue work products (`issue_work_products`), and their part of the issue read model.
 */
@Module({
  imports: [IssuesModule, AttachmentsModule],
  controllers: [ArtifactsController, WorkProductsController],
  providers: [ArtifactsService, ArtifactsRepository, WorkProductsService, WorkProductsRepository, IssueWorkProductReads],
})
export class ArtifactsModule {}
