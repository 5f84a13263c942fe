import { Injectable } from '@nestjs/common';
import type { BoardActor } from '../../common/auth/actor';
import { iso } from '../../database/row-mapping';
import { IssueStore } from './issue-store.service';
import { IssuesRepository } from './issues.repository';

export interface IssueUserStateDto {
  issueId: string;
  userId: string;
  lastReadAt: string | null;
  inboxArchivedAt: string | null;
}

/**
 * A board user's view state of an issue, behind the `touchedByUserId`, `unreadForUserId` and
 * `inboxArchivedByUserId` list filters: reading marks comments seen; archiving hides the issue from
 * that user's inbox until something newer happens on it.
 */
@Injectable()
export class IssueInboxService {
  constructor(
    private readonly issues: IssuesRepository,
    private readonly store: IssueStore,
  ) {}

  markRead(actor: BoardActor, routeCompanyId: string | undefined, ref: string): Promise<IssueUserStateDto> {
    return this.set(actor, routeCompanyId, ref, 'last_read_at', 'now()');
  }

  archive(actor: BoardActor, routeCompanyId: string | undefined, ref: string): Promise<IssueUserStateDto> {
    return this.set(actor, routeCompanyId, ref, 'inbox_archived_at', 'now()');
  }

  unarchive(actor: BoardActor, routeCompanyId: string | undefined, ref: string): Promise<IssueUserStateDto> {
    return this.set(actor, routeCompanyId, ref, 'inbox_archived_at', 'NULL');
  }

  private async set(
    actor: BoardActor,
    routeCompanyId: string | undefined,
    ref: string,
    column: 'last_read_at' | 'inbox_archived_at',
    value: 'now()' | 'NULL',
  ): Promise<IssueUserStateDto> {
    const issue = await this.store.load(routeCompanyId, ref);
    const row = await this.issues.setUserState(issue.companyId, issue.id, actor.userId, column, value);
    return { issueId: issue.id, userId: actor.userId, lastReadAt: iso(row.lastReadAt), inboxArchivedAt: iso(row.inboxArchivedAt) };
  }
}
