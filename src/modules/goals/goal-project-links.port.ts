import { Injectable } from '@nestjs/common';

/** What deleting a goal asks of the projects module: its links to projects (project_goals, owned by projects). */
export interface GoalProjectLinksOwner {
  /** The projects of the company linked to the goal. */
  projectIdsOfGoal(companyId: string, goalId: string): Promise<string[]>;
  /** Each project's legacy `goalId` follows its first remaining linked goal (after a goal deletion). */
  goalRemoved(companyId: string, projectIds: string[]): Promise<void>;
}

/**
 * The port a goal deletion repairs project links through. The projects module imports goals (its
 * goal references), so goals cannot import it: projects registers its part at start-up. Until then
 * a goal has no linked projects (a set-up without projects).
 */
@Injectable()
export class GoalProjectLinks {
  owner: GoalProjectLinksOwner = {
    projectIdsOfGoal: async () => [],
    goalRemoved: async () => undefined,
  };

  register(owner: GoalProjectLinksOwner): void {
    this.owner = owner;
  }
}
