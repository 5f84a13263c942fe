import { Module } from '@nestjs/common';
import { IssuesModule } from '../issues/issues.module';
import { AnnotationsController } from './annotations.controller';
import { AnnotationsService } from './annotations.service';
import { DocumentsController } from './documents.controller';
import { DocumentsService } from './documents.service';
import { PlanDecompositionsController } from './plan-decompositions.controller';
import { PlanDecompositionsRepository } from './plan-decompositions.repository';
import { PlanDecompositions } from './plan-decompositions.service';

@Module({
  imports: [IssuesModule],
  controllers: [DocumentsController, AnnotationsController, PlanDecompositionsController],
  providers: [DocumentsService, AnnotationsService, PlanDecompositionsRepository, PlanDecompositions],
  exports: [DocumentsService, AnnotationsService],
})
export class DocumentsModule {}
