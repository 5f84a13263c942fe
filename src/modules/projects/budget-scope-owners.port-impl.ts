import { Injectable, OnModuleInit } from '@nestjs/common';
import { BudgetScopeOwners } from '../budgets/budget-scope-owners.port';
import { ProjectsRepository } from './projects.repository';

/** The projects module's part of the budgets port: pause and resume a project scope. */
@Injectable()
export class ProjectBudgetScopes implements OnModuleInit {
  constructor(
    private readonly repo: ProjectsRepository,
    private readonly budgets: BudgetScopeOwners,
  ) {}

  onModuleInit(): void {
    const repo = this.repo;
    this.budgets.registerProjects({
      pause: (companyId, projectId) => repo.pauseForBudget(companyId, projectId),
      resume: (companyId, projectId) => repo.resumeFromBudget(companyId, projectId),
    });
  }
}
