import { AgentIdentitiesModule } from '../../common/process/agent-identities.module';
import { Module } from '@nestjs/common';
import { BudgetsModule } from '../budgets/budgets.module';
import { GoalsModule } from '../goals/goals.module';
import { ProjectBudgetScopes } from './budget-scope-owners.port-impl';
import { GoalProjectLinksRegistration } from './goal-project-links.port-impl';
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

/**
 * Projects, their goals and workspaces (`projects`, `project_goals`, `project_workspaces`), and the
 * workspaces' runtime services (`runtime_service_operations`, the supervised processes).
 */
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
    ProjectTaskCounts,
    ProjectBudgetScopes,
    GoalProjectLinksRegistration,
  ],
  exports: [ProjectsService, WorkspacesService, ProjectTaskCounts],
})
export class ProjectsModule {}
