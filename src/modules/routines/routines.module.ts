import { Module, OnModuleInit } from '@nestjs/common';
import { FolderItemRegistry } from '../folders/folder-items';
import { FoldersModule } from '../folders/folders.module';
import { IssuesModule } from '../issues/issues.module';
import { AgentsModule } from '../agents/agents.module';
import { RoutineFiring } from './routine-firing.service';
import { RoutinesController } from './routines.controller';
import { RoutinesScheduler } from './routines.jobs';
import { RoutinesRepository } from './routines.repository';
import { RoutinesService } from './routines.service';
import { AuthorizationModule } from '../authorization/authorization.module';
import { BudgetsModule } from '../budgets/budgets.module';
import { recordCompanies } from '../../common/references/record-company.repository';

/** Routines on a schedule: CRUD, triggers, executions, and the scheduler that fires them once across instances. */
@Module({
  imports: [BudgetsModule, AuthorizationModule, IssuesModule, FoldersModule, AgentsModule],
  controllers: [RoutinesController],
  providers: [recordCompanies('routines'), RoutinesRepository, RoutinesService, RoutineFiring, RoutinesScheduler],
  exports: [RoutinesService, RoutinesScheduler],
})
export class RoutinesModule implements OnModuleInit {
  constructor(
    private readonly folderItems: FolderItemRegistry,
    private readonly repo: RoutinesRepository,
  ) {}

  onModuleInit(): void {
    // routines are filed in routine folders (the folders module counts and files them through this)
    this.folderItems.register('routine', {
      counts: (companyId) => this.repo.folderCounts(companyId),
      setFolder: (companyId, id, folderId) => this.repo.setFolder(companyId, id, folderId),
    });
  }
}
