import { Injectable } from '@nestjs/common';

/** Which of these issues of a company are hidden (their events are not delivered). */
export type HiddenIssueCheck = (companyId: string, issueIds: string[]) => Promise<Set<string>>;

/**
 * Live events about hidden issues stay out of the stream, as out of the activity feed: the issues
 * module registers its check at start-up (common cannot import it); until then no issue is hidden.
 */
@Injectable()
export class HiddenIssues {
  #check: HiddenIssueCheck = async () => new Set();

  register(check: HiddenIssueCheck): void {
    this.#check = check;
  }

  among(companyId: string, issueIds: string[]): Promise<Set<string>> {
    return this.#check(companyId, issueIds);
  }
}
