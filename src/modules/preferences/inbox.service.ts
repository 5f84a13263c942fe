import { Injectable, Logger } from '@nestjs/common';
import type { Actor } from '../../common/auth/actor';
import { unprocessable } from '../../common/errors/domain-error';
import { Db } from '../../database/db.service';
import { boardUserId } from './board-user';
import { CreateInboxDismissalDto, InboxDismissalDto, SidebarBadgesDto } from './dto/preferences.dto';

interface DismissalRow {
  id: string;
  company_id: string;
  user_id: string;
  item_key: string;
  kind: string;
  snoozed_until: Date | null;
  created_at: Date;
  updated_at: Date;
}

const toDismissal = (r: DismissalRow): InboxDismissalDto => ({
  id: r.id,
  companyId: r.company_id,
  userId: r.user_id,
  itemKey: r.item_key,
  kind: r.kind,
  snoozedUntil: r.snoozed_until ? new Date(r.snoozed_until).toISOString() : null,
  createdAt: new Date(r.created_at).toISOString(),
  updatedAt: new Date(r.updated_at).toISOString(),
});

/** A dismissal hides its item until it is deleted; a snooze only until `snoozedUntil`. */
const ACTIVE = `(kind = 'dismiss' OR snoozed_until > now())`;

/**
 * Inbox items of a board user: pending approvals (`approval:<id>`), pending join requests
 * (`join:<id>`), runs that failed in the last 24 hours (`run:<id>`) and attention items. Approvals
 * and join requests arrive with other modules: their tables are only read once they exist.
 */
@Injectable()
export class InboxService {
  private readonly logger = new Logger('Inbox');

  constructor(private readonly db: Db) {}

  async listDismissals(actor: Actor, companyId: string): Promise<InboxDismissalDto[]> {
    const rows = await this.db.query<DismissalRow>(
      `SELECT * FROM inbox_dismissals WHERE company_id = $1 AND user_id = $2 AND ${ACTIVE} ORDER BY updated_at DESC, id`,
      [companyId, boardUserId(actor)],
    );
    return rows.map(toDismissal);
  }

  /** Dismissing or snoozing the same item again replaces the earlier dismissal. */
  async dismiss(actor: Actor, companyId: string, dto: CreateInboxDismissalDto): Promise<InboxDismissalDto> {
    const kind = dto.kind ?? 'dismiss';
    if (kind === 'dismiss' && dto.snoozedUntil !== undefined) {
      throw unprocessable('snoozedUntil is only allowed with kind snooze', 'invalid_dismissal', { field: 'snoozedUntil' });
    }
    if (kind === 'snooze') {
      if (dto.snoozedUntil === undefined)
        throw unprocessable('snoozedUntil is required for kind snooze', 'invalid_dismissal', { field: 'snoozedUntil' });
      const until = Date.parse(dto.snoozedUntil);
      if (!(until > Date.now())) throw unprocessable('snoozedUntil must be in the future', 'invalid_dismissal', { field: 'snoozedUntil' });
    }
    const [row] = await this.db.query<DismissalRow>(
      `INSERT INTO inbox_dismissals (company_id, user_id, item_key, kind, snoozed_until) VALUES ($1, $2, $3, $4, $5)
       ON CONFLICT (company_id, user_id, item_key) DO UPDATE SET kind = EXCLUDED.kind, snoozed_until = EXCLUDED.snoozed_until, updated_at = now()
       RETURNING *`,
      [companyId, boardUserId(actor), dto.itemKey, kind, kind === 'snooze' ? new Date(dto.snoozedUntil!).toISOString() : null],
    );
    return toDismissal(row);
  }

  /**
   * Counts a board sidebar shows: pending approvals, pending join requests, runs that failed or
   * timed out in the last 24 hours, and the user's inbox (all of those items that are not
   * dismissed or currently snoozed).
   */
  async badges(actor: Actor, companyId: string): Promise<SidebarBadgesDto> {
    const approvals = await this.optionalKeys(
      'approvals',
      'approval',
      `SELECT id FROM approvals WHERE company_id = $1 AND status = 'pending'`,
      companyId,
    );
    const joins = await this.optionalKeys(
      'join_requests',
      'join',
      `SELECT id FROM join_requests WHERE company_id = $1 AND status IN ('pending', 'pending_approval')`,
      companyId,
    );
    const runs = (
      await this.db.query<{ id: string }>(
        `SELECT id FROM heartbeat_runs
          WHERE company_id = $1 AND status IN ('failed', 'timed_out') AND finished_at > now() - interval '24 hours'`,
        [companyId],
      )
    ).map((r) => `run:${r.id}`);
    const keys = [...approvals, ...joins, ...runs];
    const [{ count }] = keys.length
      ? await this.db.query<{ count: number }>(
          `SELECT count(*)::int AS count FROM unnest($3::text[]) AS k(item_key)
            WHERE NOT EXISTS (SELECT 1 FROM inbox_dismissals d WHERE d.company_id = $1 AND d.user_id = $2 AND d.item_key = k.item_key AND ${ACTIVE})`,
          [companyId, boardUserId(actor), keys],
        )
      : [{ count: 0 }];
    return { approvals: approvals.length, joinRequests: joins.length, failedRuns: runs.length, inbox: count };
  }

  /** Item keys from a table another module owns; absent (or not yet shaped as expected) means none. */
  private async optionalKeys(table: string, prefix: string, sql: string, companyId: string): Promise<string[]> {
    const [{ present }] = await this.db.query<{ present: boolean }>(`SELECT to_regclass($1) IS NOT NULL AS present`, [`public.${table}`]);
    if (!present) return [];
    try {
      return (await this.db.query<{ id: string }>(sql, [companyId])).map((r) => `${prefix}:${r.id}`);
    } catch (err) {
      this.logger.warn(`could not count ${table}: ${(err as Error).message}`);
      return [];
    }
  }
}
