import { Module } from '@nestjs/common';
import { GoalsController } from './goals.controller';
import { GoalsRepository } from './goals.repository';
import { GoalsService } from './goals.service';
import { GoalCompanyRepository } from './goal-company.repository';

@Module({
  controllers: [GoalsController],
  providers: [GoalCompanyRepository, GoalsService, GoalsRepository],
  exports: [GoalsService],
})
export class GoalsModule {}
