import { Module } from '@nestjs/common';
import { InstanceModule } from '../instance/instance.module';
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
import { IssueDocumentReads } from './issue-read-contributions.port-impl';

/**
 * Issue documents, their revisions, annotation threads and plan decompositions (`issue_documents`
 * and its children), and their part of the issue read model.
 */
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
    IssueDocumentReads,
  ],
  exports: [DocumentsService, AnnotationsService],
})
export class DocumentsModule {}
