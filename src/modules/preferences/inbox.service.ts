import { Injectable, Logger } from '@nestjs/common';
import type { Actor } from '../../common/auth/actor';
import { boardUserId } from './board-user';
import { CreateInboxDismissalDto, InboxDismissalDto, SidebarBadgesDto } from './dto/preferences.dto';
import { preferencesError } from './preferences.errors';
import { PreferencesRepository } from './preferences.repository';

/**
 * Inbox items of a board user: pending approvals (`approval:<id>`), pending join requests
 * (`join:<id>`), runs that failed in the last 24 hours (`run:<id>`) and attention items. Approvals
 * and join requests arrive with other modules: their tables are only read once they exist.
 */
@Injectable()
export class InboxService {
  private readonly logger = new Logger('Inbox');

  constructor(private readonly repo: PreferencesRepository) {}

  async listDismissals(actor: Actor, companyId: string): Promise<InboxDismissalDto[]> {
    return this.repo.activeDismissals(companyId, boardUserId(actor));
  }

  /** Dismissing or snoozing the same item again replaces the earlier dismissal. */
  async dismiss(actor: Actor, companyId: string, dto: CreateInboxDismissalDto): Promise<InboxDismissalDto> {
    const kind = dto.kind ?? 'dismiss';
    if (kind === 'dismiss' && dto.snoozedUntil !== undefined) {
      throw preferencesError('invalid_dismissal', 'snoozedUntil is only allowed with kind snooze', { field: 'snoozedUntil' });
    }
    if (kind === 'snooze') {
      if (dto.snoozedUntil === undefined)
        throw preferencesError('invalid_dismissal', 'snoozedUntil is required for kind snooze', { field: 'snoozedUntil' });
      const until = Date.parse(dto.snoozedUntil);
      if (!(until > Date.now()))
        throw preferencesError('invalid_dismissal', 'snoozedUntil must be in the future', { field: 'snoozedUntil' });
    }
    return this.repo.upsertDismissal(
      companyId,
      boardUserId(actor),
      dto.itemKey,
      kind,
      kind === 'snooze' ? new Date(dto.snoozedUntil!).toISOString() : null,
    );
  }

  /**
   * Counts a board sidebar shows: pending approvals, pending join requests, runs that failed or
   * timed out in the last 24 hours, and the user's inbox (all of those items that are not
   * dismissed or currently snoozed).
   */
  async badges(actor: Actor, companyId: string): Promise<SidebarBadgesDto> {
    const approvals = await this.optionalKeys('approvals', 'approval', () => this.repo.pendingApprovalIds(companyId));
    const joins = await this.optionalKeys('join_requests', 'join', () => this.repo.pendingJoinRequestIds(companyId));
    const runs = (await this.repo.recentlyFailedRunIds(companyId)).map((id) => `run:${id}`);
    const keys = [...approvals, ...joins, ...runs];
    const count = keys.length ? await this.repo.countUndismissed(companyId, boardUserId(actor), keys) : 0;
    return { approvals: approvals.length, joinRequests: joins.length, failedRuns: runs.length, inbox: count };
  }

  /** Item keys from a table another module owns; absent (or not yet shaped as expected) means none. */
  private async optionalKeys(table: string, prefix: string, ids: () => Promise<string[]>): Promise<string[]> {
    if (!(await this.repo.tableExists(table))) return [];
    try {
      return (await ids()).map((id) => `${prefix}:${id}`);
    } catch (err) {
      this.logger.warn(`could not count ${table}: ${(err as Error).message}`);
      return [];
    }
  }
}
