import { Module } from '@nestjs/common';
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
import { RoutineFolderItems } from './folder-items.port-impl';

/** Routines on a schedule: CRUD, triggers, executions, and the scheduler that fires them once across instances. */
@Module({
  imports: [BudgetsModule, AuthorizationModule, IssuesModule, FoldersModule, AgentsModule],
  controllers: [RoutinesController],
  providers: [recordCompanies('routines'), RoutinesRepository, RoutinesService, RoutineFiring, RoutinesScheduler, RoutineFolderItems],
  exports: [RoutinesService, RoutinesScheduler],
})
export class RoutinesModule {}
