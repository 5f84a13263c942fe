import { Injectable, OnModuleInit } from '@nestjs/common';
import { GoalProjectLinks } from '../goals/goal-project-links.port';
import { ProjectsRepository } from './projects.repository';

/** The projects module's part of the goals port: a deleted goal's project links. */
@Injectable()
export class GoalProjectLinksRegistration implements OnModuleInit {
  constructor(
    private readonly repo: ProjectsRepository,
    private readonly goalLinks: GoalProjectLinks,
  ) {}

  onModuleInit(): void {
    const repo = this.repo;
    this.goalLinks.register({
      projectIdsOfGoal: (companyId, goalId) => repo.projectIdsOfGoal(companyId, goalId),
      goalRemoved: (companyId, projectIds) => repo.resyncLegacyGoal(companyId, projectIds),
    });
  }
}
