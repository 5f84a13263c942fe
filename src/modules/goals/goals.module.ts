import { Module } from '@nestjs/common';
import { CompanyReferences } from './company-references';
import { CompanyReferencesRepository } from './company-references.repository';
import { GoalProjectLinks } from './goal-project-links.port';
import { GoalsController } from './goals.controller';
import { GoalsRepository } from './goals.repository';
import { GoalsService } from './goals.service';
import { recordCompanies } from '../../common/references/record-company.repository';

/**
 * Goals (`goals`) and the company check of the records a goal or project names; declares the
 * GoalProjectLinks port, which projects fills.
 */
@Module({
  controllers: [GoalsController],
  providers: [recordCompanies('goals'), GoalsService, GoalsRepository, CompanyReferencesRepository, CompanyReferences, GoalProjectLinks],
  exports: [GoalsService, CompanyReferences, GoalProjectLinks],
})
export class GoalsModule {}
