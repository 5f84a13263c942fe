import { Injectable } from '@nestjs/common';
import { IssueRecord } from './issue.types';

/**
 * Seam for execution workspaces (they arrive with their own module): checkout must answer 409 when
 * the issue's execution workspace is a closed isolated workspace. Until workspaces exist there is
 * nothing to close, so every workspace is usable; the workspaces module replaces `assertUsable`'s
 * body (or registers a checker here) without touching the checkout logic.
 */
@Injectable()
export class ExecutionWorkspaceGate {
  private checker?: (issue: IssueRecord) => Promise<void>;

  /** The workspaces module registers the check that throws 409 for a closed isolated workspace. */
  register(checker: (issue: IssueRecord) => Promise<void>): void {
    this.checker = checker;
  }

  async assertUsable(issue: IssueRecord): Promise<void> {
    if (issue.executionWorkspaceId && this.checker) await this.checker(issue);
  }
}
