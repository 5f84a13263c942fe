import { Injectable } from '@nestjs/common';

/** Answers the id of the hold pausing an issue's subtree, or null. */
export type IssueHoldProbe = (issueId: string) => Promise<string | null>;

/**
 * Whether an issue's subtree is paused: while a hold covers an issue, wakes for it are deferred and
 * not promoted. The issues module (which imports the engine) registers its probe at start-up;
 * until then no issue is held.
 */
@Injectable()
export class IssueHolds {
  #probe: IssueHoldProbe | null = null;

  register(probe: IssueHoldProbe): void {
    this.#probe = probe;
  }

  /** The id of the hold pausing the issue (on it or an ancestor), or null. */
  async holdOf(issueId: string): Promise<string | null> {
    return this.#probe ? this.#probe(issueId) : null;
  }
}
