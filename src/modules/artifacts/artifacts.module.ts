import { Module, OnModuleInit } from '@nestjs/common';
import { IssueReadContributions } from '../issues/issue-read-contributions';
import { toWorkProductResponse } from './work-product.types';
import { AttachmentsModule } from '../attachments/attachments.module';
import { IssuesModule } from '../issues/issues.module';
import { ArtifactsController } from './artifacts.controller';
import { ArtifactsRepository } from './artifacts.repository';
import { ArtifactsService } from './artifacts.service';
import { WorkProductsController } from './work-products.controller';
import { WorkProductsRepository } from './work-products.repository';
import { WorkProductsService } from './work-products.service';

@Module({
  imports: [IssuesModule, AttachmentsModule],
  controllers: [ArtifactsController, WorkProductsController],
  providers: [ArtifactsService, ArtifactsRepository, WorkProductsService, WorkProductsRepository],
})
export class ArtifactsModule implements OnModuleInit {
  constructor(
    private readonly workProducts: WorkProductsRepository,
    private readonly issueReads: IssueReadContributions,
  ) {}

  /** The issue page lists the issue's work products. */
  onModuleInit(): void {
    this.issueReads.workProducts = async (companyId, issueId) =>
      (await this.workProducts.listByIssue(companyId, issueId)).map(toWorkProductResponse);
  }
}
