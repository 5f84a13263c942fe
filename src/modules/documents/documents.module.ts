import { Module } from '@nestjs/common';
import { IssuesModule } from '../issues/issues.module';
import { AnnotationsController } from './annotations.controller';
import { AnnotationsService } from './annotations.service';
import { DocumentsController } from './documents.controller';
import { DocumentsService } from './documents.service';

@Module({
  imports: [IssuesModule],
  controllers: [DocumentsController, AnnotationsController],
  providers: [DocumentsService, AnnotationsService],
  exports: [DocumentsService, AnnotationsService],
})
export class DocumentsModule {}
