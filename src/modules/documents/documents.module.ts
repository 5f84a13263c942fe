import { InstanceModule } from '../instance/instance.module';
import { Module, OnModuleInit } from '@nestjs/common';
import { IssueReadContributions } from '../issues/issue-read-contributions';
import { issueDocumentsView, planReviewThreads } from './issue-document-reads';
import { IssuesModule } from '../issues/issues.module';
import { AnnotationsController } from './annotations.controller';
import { AnnotationsRepository } from './annotations.repository';
import { AnnotationsService } from './annotations.service';
import { DocumentsController } from './documents.controller';
import { DocumentsRepository } from './documents.repository';
import { DocumentsService } from './documents.service';
import { PlanDecompositionsController } from './plan-decompositions.controller';
import { PlanDecompositionsRepository } from './plan-decompositions.repository';
import { PlanDecompositions } from './plan-decompositions.service';
import { recordCompanies } from '../../common/references/record-company.repository';

@Module({
  imports: [IssuesModule, InstanceModule],
  controllers: [DocumentsController, AnnotationsController, PlanDecompositionsController],
  providers: [
    recordCompanies('documents'),
    DocumentsService,
    DocumentsRepository,
    AnnotationsService,
    AnnotationsRepository,
    PlanDecompositionsRepository,
    PlanDecompositions,
  ],
  exports: [DocumentsService, AnnotationsService],
})
export class DocumentsModule implements OnModuleInit {
  constructor(
    private readonly docRows: DocumentsRepository,
    private readonly annotationRows: AnnotationsRepository,
    private readonly issueReads: IssueReadContributions,
  ) {}

  /** The issue page and the heartbeat context show the issue's documents and the plan's open review threads. */
  onModuleInit(): void {
    this.issueReads.documents = (companyId, issueId) => issueDocumentsView(this.docRows, companyId, issueId);
    this.issueReads.planReviewThreads = (companyId, issueId) => planReviewThreads(this.annotationRows, companyId, issueId);
  }
}
