import { Injectable, OnModuleInit } from '@nestjs/common';
import { FolderItemRegistry } from '../folders/folder-items.port';
import { RoutinesRepository } from './routines.repository';

/** Routines are filed in routine folders: the folders module counts and files them through this. */
@Injectable()
export class RoutineFolderItems implements OnModuleInit {
  constructor(
    private readonly folderItems: FolderItemRegistry,
    private readonly repo: RoutinesRepository,
  ) {}

  onModuleInit(): void {
    this.folderItems.register('routine', {
      counts: (companyId) => this.repo.folderCounts(companyId),
      setFolder: (companyId, id, folderId) => this.repo.setFolder(companyId, id, folderId),
    });
  }
}
