import { Injectable, OnModuleInit } from '@nestjs/common';
import { BudgetScopeOwners } from '../budgets/budget-scope-owners';
import { GoalProjectLinks } from '../goals/goal-project-links.port';
import { ProjectsRepository } from './projects.repository';

/**
 * The projects module's part of the ports lower modules declare: budgets (pause and resume a
 * project scope) and goals (a deleted goal's project links). Registered at start-up, so those
 * modules change projects rows only through this module.
 */
@Injectable()
export class ProjectOwners implements OnModuleInit {
  constructor(
    private readonly repo: ProjectsRepository,
    private readonly budgets: BudgetScopeOwners,
    private readonly goalLinks: GoalProjectLinks,
  ) {}

  onModuleInit(): void {
    const repo = this.repo;
    this.budgets.registerProjects({
      pause: (companyId, projectId) => repo.pauseForBudget(companyId, projectId),
      resume: (companyId, projectId) => repo.resumeFromBudget(companyId, projectId),
    });
    this.goalLinks.register({
      projectIdsOfGoal: (companyId, goalId) => repo.projectIdsOfGoal(companyId, goalId),
      goalRemoved: (companyId, projectIds) => repo.resyncLegacyGoal(companyId, projectIds),
    });
  }
}
