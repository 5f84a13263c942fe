import { Injectable, OnModuleInit } from '@nestjs/common';
import { FolderItemRegistry } from '../folders/folder-items.port';
import { SkillsRepository } from './skills.repository';

/** Skills are filed in skill folders: the folders module counts and files them through this. */
@Injectable()
export class SkillFolderItems implements OnModuleInit {
  constructor(
    private readonly folderItems: FolderItemRegistry,
    private readonly repo: SkillsRepository,
  ) {}

  onModuleInit(): void {
    this.folderItems.register('skill', {
      counts: (companyId) => this.repo.folderCounts(companyId),
      setFolder: (companyId, id, folderId) => this.repo.setFolder(companyId, id, folderId),
    });
  }
}
