import { Module } from '@nestjs/common';
import { CompaniesController } from './companies.controller';
import { CompaniesRepository } from './companies.repository';
import { CompaniesService } from './companies.service';
import { IssueNumbersRepository } from './issue-numbers.repository';
import { StorageModule } from '../storage/storage.module';
import { BudgetsModule } from '../budgets/budgets.module';

@Module({
  imports: [BudgetsModule, StorageModule],
  controllers: [CompaniesController],
  providers: [CompaniesService, CompaniesRepository, IssueNumbersRepository],
  exports: [CompaniesService, IssueNumbersRepository],
})
export class CompaniesModule {}
