import { Module } from '@nestjs/common';
import { IssuesModule } from '../issues/issues.module';
import { RoutineFiring } from './routine-firing.service';
import { RoutinesController } from './routines.controller';
import { RoutinesScheduler } from './routines.jobs';
import { RoutinesRepository } from './routines.repository';
import { RoutinesService } from './routines.service';
import { AuthorizationModule } from '../authorization/authorization.module';
import { BudgetsModule } from '../budgets/budgets.module';

/** Routines on a schedule: CRUD, triggers, executions, and the scheduler that fires them once across instances. */
@Module({
  imports: [BudgetsModule, AuthorizationModule, IssuesModule],
  controllers: [RoutinesController],
  providers: [RoutinesRepository, RoutinesService, RoutineFiring, RoutinesScheduler],
  exports: [RoutinesService, RoutinesScheduler],
})
export class RoutinesModule {}
