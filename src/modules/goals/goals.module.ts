import { Module } from '@nestjs/common';
import { CompanyReferences } from './company-references';
import { CompanyReferencesRepository } from './company-references.repository';
import { GoalProjectLinks } from './goal-project-links.port';
import { GoalsController } from './goals.controller';
import { GoalsRepository } from './goals.repository';
import { GoalsService } from './goals.service';

@Module({
  controllers: [GoalsController],
  providers: [GoalsService, GoalsRepository, CompanyReferencesRepository, CompanyReferences, GoalProjectLinks],
  exports: [GoalsService, CompanyReferences, GoalProjectLinks],
})
export class GoalsModule {}
