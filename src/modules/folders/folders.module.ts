import { Module } from '@nestjs/common';
import { FolderItemRegistry } from './folder-items.port';
import { FoldersController } from './folders.controller';
import { FoldersRepository } from './folders.repository';
import { FoldersService } from './folders.service';
import { recordCompanies } from '../../common/references/record-company.repository';

/**
 * Folders of routines and skills. Item modules import it, check a folder with
 * `FoldersService.assertFileable`, and register their items' store in `FolderItemRegistry`.
 */
@Module({
  controllers: [FoldersController],
  providers: [recordCompanies('folders'), FoldersRepository, FoldersService, FolderItemRegistry],
  exports: [FoldersService, FolderItemRegistry],
})
export class FoldersModule {}
