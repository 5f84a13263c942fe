import { AgentIdentitiesModule } from '../../common/process/agent-identities.module';
import { Module } from '@nestjs/common';
import { BudgetsModule } from '../budgets/budgets.module';
import { GoalsModule } from '../goals/goals.module';
import { ProjectOwners } from './project-owners';
import { ProjectsController } from './projects.controller';
import { ProjectsRepository } from './projects.repository';
import { ProjectsService } from './projects.service';
import { RuntimeOperationsRepository } from './runtime-services.repository';
import { RuntimeServicesService } from './runtime-services.service';
import { RuntimeSupervisor } from './runtime-supervisor.service';
import { WorkspacesController } from './workspaces.controller';
import { WorkspacesRepository } from './workspaces.repository';
import { WorkspacesService } from './workspaces.service';
import { PreferencesModule } from '../preferences/preferences.module';
import { SecretsModule } from '../secrets/secrets.module';
import { ProjectTaskCounts } from './project-task-counts.port';
import { recordCompanies } from '../../common/references/record-company.repository';

@Module({
  imports: [SecretsModule, PreferencesModule, AgentIdentitiesModule, BudgetsModule, GoalsModule],
  controllers: [ProjectsController, WorkspacesController],
  providers: [
    recordCompanies('projects'),
    ProjectsRepository,
    WorkspacesRepository,
    RuntimeOperationsRepository,
    ProjectsService,
    WorkspacesService,
    RuntimeSupervisor,
    RuntimeServicesService,
    ProjectOwners,
    ProjectTaskCounts,
  ],
  exports: [ProjectsService, WorkspacesService, ProjectTaskCounts],
})
export class ProjectsModule {}
