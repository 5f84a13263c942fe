import { Module } from '@nestjs/common';
import { CompaniesController } from './companies.controller';
import { CompaniesRepository } from './companies.repository';
import { CompaniesService } from './companies.service';
import { IssueNumbersRepository } from './issue-numbers.repository';
import { StorageModule } from '../storage/storage.module';
import { BudgetsModule } from '../budgets/budgets.module';
import { AgentsModule } from '../agents/agents.module';
import { CompanyBudgetOwner } from './budget-scope-owners.port-impl';

/**
 * Companies, the tenant (`companies`): create, update, archive, branding, issue numbers; fills the
 * budgets port for company scopes.
 */
@Module({
  imports: [BudgetsModule, StorageModule, AgentsModule],
  controllers: [CompaniesController],
  providers: [CompaniesService, CompaniesRepository, CompanyBudgetOwner, IssueNumbersRepository],
  exports: [CompaniesService, IssueNumbersRepository],
})
export class CompaniesModule {}
