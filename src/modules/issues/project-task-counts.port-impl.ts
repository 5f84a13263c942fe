import { Injectable, OnModuleInit } from '@nestjs/common';
import { ProjectTaskCounts } from '../projects/project-task-counts.port';
import { IssueListRepository } from './issue-list.repository';

/** The projects' `taskCount`: issues per project, counted by the owner of the issues. */
@Injectable()
export class ProjectTaskCountsRegistration implements OnModuleInit {
  constructor(
    private readonly taskCounts: ProjectTaskCounts,
    private readonly lists: IssueListRepository,
  ) {}

  onModuleInit(): void {
    this.taskCounts.register((companyId, ids) => this.lists.countByProject(companyId, ids));
  }
}
