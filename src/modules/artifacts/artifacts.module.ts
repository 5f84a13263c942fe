import { Module } from '@nestjs/common';
import { IssuesModule } from '../issues/issues.module';
import { ArtifactsController } from './artifacts.controller';
import { ArtifactsService } from './artifacts.service';
import { WorkProductsController } from './work-products.controller';
import { WorkProductsService } from './work-products.service';

@Module({
  imports: [IssuesModule],
  controllers: [ArtifactsController, WorkProductsController],
  providers: [ArtifactsService, WorkProductsService],
})
export class ArtifactsModule {}
