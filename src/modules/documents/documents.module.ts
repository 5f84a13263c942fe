import { Module } from '@nestjs/common';
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

@Module({
  imports: [IssuesModule],
  controllers: [DocumentsController, AnnotationsController, PlanDecompositionsController],
  providers: [
    DocumentsService,
    DocumentsRepository,
    AnnotationsService,
    AnnotationsRepository,
    PlanDecompositionsRepository,
    PlanDecompositions,
  ],
  exports: [DocumentsService, AnnotationsService],
})
export class DocumentsModule {}
