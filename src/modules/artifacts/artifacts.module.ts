import { Module } from '@nestjs/common';
import { IssuesModule } from '../issues/issues.module';
import { ArtifactsController } from './artifacts.controller';
import { ArtifactsRepository } from './artifacts.repository';
import { ArtifactsService } from './artifacts.service';
import { WorkProductsController } from './work-products.controller';
import { WorkProductsRepository } from './work-products.repository';
import { WorkProductsService } from './work-products.service';

@Module({
  imports: [IssuesModule],
  controllers: [ArtifactsController, WorkProductsController],
  providers: [ArtifactsService, ArtifactsRepository, WorkProductsService, WorkProductsRepository],
})
export class ArtifactsModule {}
