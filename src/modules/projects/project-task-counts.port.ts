import { Injectable } from '@nestjs/common';

/** Issues per project of a company, by project id (a project without issues is absent). */
export type ProjectTaskCounter = (companyId: string, projectIds: string[]) => Promise<Map<string, number>>;

/**
 * How many issues each project holds, for the project list and page (`taskCount`). The issues
 * module owns the issues and sits above projects in the import graph: it registers the counter at
 * start-up. Until then every project counts 0.
 */
@Injectable()
export class ProjectTaskCounts {
  private counter: ProjectTaskCounter = async () => new Map();

  register(counter: ProjectTaskCounter): void {
    this.counter = counter;
  }

  of(companyId: string, projectIds: string[]): Promise<Map<string, number>> {
    return projectIds.length ? this.counter(companyId, projectIds) : Promise.resolve(new Map());
  }
}
