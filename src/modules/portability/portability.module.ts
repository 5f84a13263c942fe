import { Module } from '@nestjs/common';
import { AgentsModule } from '../agents/agents.module';
import { BudgetsModule } from '../budgets/budgets.module';
import { CompaniesModule } from '../companies/companies.module';
import { DocumentsModule } from '../documents/documents.module';
import { GoalsModule } from '../goals/goals.module';
import { IssuesModule } from '../issues/issues.module';
import { ProjectsModule } from '../projects/projects.module';
import { RoutinesModule } from '../routines/routines.module';
import { SecretsModule } from '../secrets/secrets.module';
import { SkillsModule } from '../skills/skills.module';
import { FidelityRepository } from './fidelity.repository';
import { PortabilityExportService } from './portability-export.service';
import { PortabilityImportService } from './portability-import.service';
import { PortabilityController } from './portability.controller';
import { PortabilityService } from './portability.service';

/**
 * Company export and import (the portable company package), through the owning modules' services.
 */
@Module({
  imports: [
    AgentsModule,
    BudgetsModule,
    CompaniesModule,
    DocumentsModule,
    GoalsModule,
    IssuesModule,
    ProjectsModule,
    RoutinesModule,
    SecretsModule,
    SkillsModule,
  ],
  controllers: [PortabilityController],
  providers: [PortabilityService, PortabilityExportService, PortabilityImportService, FidelityRepository],
})
export class PortabilityModule {}
