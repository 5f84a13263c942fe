import { Module } from '@nestjs/common';
import { AssetsController } from './assets.controller';
import { AssetsRepository } from './assets.repository';
import { AssetsService } from './assets.service';
import { StorageService } from './storage.service';
import { recordCompanies } from '../../common/references/record-company.repository';

/**
 * Stored files (`assets`): the storage backend other modules keep files through, and the asset routes.
 */
@Module({
  controllers: [AssetsController],
  providers: [recordCompanies('storage'), StorageService, AssetsService, AssetsRepository],
  exports: [StorageService, AssetsService],
})
export class StorageModule {}
