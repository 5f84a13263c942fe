import { Module } from '@nestjs/common';
import { AssetsController } from './assets.controller';
import { AssetsRepository } from './assets.repository';
import { AssetsService } from './assets.service';
import { StorageService } from './storage.service';

@Module({
  controllers: [AssetsController],
  providers: [StorageService, AssetsService, AssetsRepository],
  exports: [StorageService, AssetsService],
})
export class StorageModule {}
