import { Module } from '@nestjs/common';
import { AssetsController } from './assets.controller';
import { AssetsRepository } from './assets.repository';
import { AssetsService } from './assets.service';
import { StorageService } from './storage.service';
import { recordCompanies } from '../../common/references/record-company.repository';

@Module({
  controllers: [AssetsController],
  providers: [recordCompanies('storage'), StorageService, AssetsService, AssetsRepository],
  exports: [StorageService, AssetsService],
})
export class StorageModule {}
