import { isoRequired } from '../../database/row-mapping';
import { Injectable } from '@nestjs/common';
import type { Actor } from '../../common/auth/actor';
import { forbidden } from '../../common/errors/domain-error';
import { issueError } from './issues.errors';
import { WakeupQueue } from '../heartbeat/wakeup-queue.service';
import { PauseTreeDto, TreeControlStateDto, TreeHoldDto, TreeResumeResultDto } from './dto/issue-controls.dto';
import { IssueStore } from './issue-store.service';
import { IssueTreeHoldsRepository, TreeHoldRecord } from './issue-tree-holds.repository';
import type { IssueRecord } from './issue.types';

const toHold = (h: TreeHoldRecord, issueId: string): TreeHoldDto => ({
  id: h.id,
  rootIssueId: h.rootIssueId,
  rootIssueIdentifier: h.rootIdentifier,
  inherited: h.rootIssueId !== issueId,
  reason: h.reason,
  createdByUserId: h.createdByUserId,
  createdAt: isoRequired(h.createdAt),
});

const boardUser = (actor: Actor) => {
  if (actor.kind !== 'board') throw forbidden('Only board users pause or resume a subtree');
  return actor.userId;
};

/**
 * Subtree pause holds: the board pauses an issue and everything under it. While a hold covers an
 * issue (on it or an ancestor), wakes for the issue are deferred (the heartbeat engine asks
 * `probe`) and checkouts are refused with 409; releasing the hold promotes the deferred wakes.
 */
@Injectable()
export class IssueTreeHolds {
  constructor(
    private readonly repo: IssueTreeHoldsRepository,
    private readonly store: IssueStore,
    private readonly queue: WakeupQueue,
  ) {}

  /** For the heartbeat engine: the hold covering an issue, by id alone. */
  readonly probe = (issueId: string): Promise<string | null> => this.repo.coveringAnyCompany(issueId);

  async state(routeCompanyId: string | undefined, ref: string): Promise<TreeControlStateDto> {
    const issue = await this.store.load(routeCompanyId, ref);
    return this.stateOf(issue);
  }

  /** 409 when the subtree is already paused (by a hold on this issue or an ancestor). */
  async pause(actor: Actor, routeCompanyId: string | undefined, ref: string, dto: PauseTreeDto): Promise<TreeControlStateDto> {
    const userId = boardUser(actor);
    const issue = await this.store.load(routeCompanyId, ref);
    const covering = await this.repo.covering(issue.companyId, issue.id);
    if (covering) throw this.alreadyPaused(covering);
    const created = await this.repo.insert(issue.companyId, issue.id, userId, dto.reason ?? null);
    if (!created) {
      const now = await this.repo.covering(issue.companyId, issue.id);
      throw now ? this.alreadyPaused(now) : issueError('issue_tree_already_paused', 'The subtree was paused concurrently');
    }
    return { issueId: issue.id, companyId: issue.companyId, activePauseHold: toHold(created, issue.id) };
  }

  /** Releases the hold rooted at this issue and promotes the subtree's deferred wakes; 409 when there is none here. */
  async resume(actor: Actor, routeCompanyId: string | undefined, ref: string): Promise<TreeResumeResultDto> {
    const userId = boardUser(actor);
    const issue = await this.store.load(routeCompanyId, ref);
    const released = await this.repo.release(issue.companyId, issue.id, userId);
    if (!released) {
      const covering = await this.repo.covering(issue.companyId, issue.id);
      if (covering) {
        throw issueError('issue_tree_held_by_ancestor', 'The subtree is paused by a hold on an ancestor; resume it there', {
          holdId: covering.id,
          rootIssueId: covering.rootIssueId,
        });
      }
      throw issueError('issue_tree_not_paused', 'The subtree of this issue is not paused');
    }
    // issues still covered by another hold (an ancestor's) stay deferred: the engine asks the probe again
    const promotedWakes = await this.queue.promoteDeferredOfIssues(await this.repo.subtree(issue.companyId, issue.id));
    return { ...(await this.stateOf(issue)), releasedHoldId: released.id, promotedWakes };
  }

  /** Checkout guard: 409 `issue_tree_paused` while a hold covers the issue. */
  async assertNotHeld(issue: Pick<IssueRecord, 'id' | 'companyId'>): Promise<void> {
    const hold = await this.repo.covering(issue.companyId, issue.id);
    if (hold) {
      throw issueError('issue_tree_paused', "The issue's subtree is paused; it cannot be checked out until the hold is released", {
        holdId: hold.id,
        rootIssueId: hold.rootIssueId,
      });
    }
  }

  private async stateOf(issue: Pick<IssueRecord, 'id' | 'companyId'>): Promise<TreeControlStateDto> {
    const hold = await this.repo.covering(issue.companyId, issue.id);
    return { issueId: issue.id, companyId: issue.companyId, activePauseHold: hold ? toHold(hold, issue.id) : null };
  }

  private alreadyPaused(h: TreeHoldRecord) {
    return issueError('issue_tree_already_paused', 'The subtree is already paused', { holdId: h.id, rootIssueId: h.rootIssueId });
  }
}
