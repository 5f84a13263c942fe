import { Injectable } from '@nestjs/common';
import { CompanyScopedRepository } from '../../database/company-scoped.repository';
import { Db } from '../../database/db.service';
import { iso, isoRequired, recordColumns } from '../../database/row-mapping';
import type { InboxDismissalDto, MembershipState } from './dto/preferences.dto';

export type ResourceType = 'project' | 'agent';

/** A stored sidebar preferences document. */
export interface SidebarPreferencesRecord {
  preferences: Record<string, unknown>;
  updatedAt: Date;
}

/** A dismissal as selected: its response with the timestamps still Dates. */
type SelectedDismissal = Omit<InboxDismissalDto, 'snoozedUntil' | 'createdAt' | 'updatedAt'> & {
  snoozedUntil: Date | null;
  createdAt: Date;
  updatedAt: Date;
};

const DISMISSAL_COLUMNS = recordColumns('id, company_id, user_id, item_key, kind, snoozed_until, created_at, updated_at');

const toDismissal = (d: SelectedDismissal): InboxDismissalDto => ({
  ...d,
  snoozedUntil: iso(d.snoozedUntil),
  createdAt: isoRequired(d.createdAt),
  updatedAt: isoRequired(d.updatedAt),
});

const SIDEBAR_COLUMNS = recordColumns('preferences, updated_at');

/** A dismissal hides its item until it is deleted; a snooze only until `snoozedUntil`. */
const ACTIVE = `(kind = 'dismiss' OR snoozed_until > now())`;

/** The reason of the global sidebar statements: that document belongs to the user, in no company. */
const GLOBAL_SIDEBAR = "a user's global sidebar document belongs to no company (its company_id is NULL); it is keyed by the user";

/** The per-user preference tables: inbox_dismissals, resource_memberships, sidebar_preferences. */
@Injectable()
export class PreferencesRepository extends CompanyScopedRepository {
  constructor(db: Db) {
    super(db);
  }

  // ---- inbox dismissals

  async activeDismissals(companyId: string, userId: string): Promise<InboxDismissalDto[]> {
    const rows = await this.rows<SelectedDismissal>(
      companyId,
      `SELECT ${DISMISSAL_COLUMNS} FROM inbox_dismissals WHERE company_id = $1 AND user_id = $2 AND ${ACTIVE} ORDER BY updated_at DESC, id`,
      [userId],
    );
    return rows.map(toDismissal);
  }

  /** Dismissing or snoozing the same item again replaces the earlier dismissal. */
  async upsertDismissal(
    companyId: string,
    userId: string,
    itemKey: string,
    kind: string,
    snoozedUntil: string | null,
  ): Promise<InboxDismissalDto> {
    const [row] = await this.rows<SelectedDismissal>(
      companyId,
      `INSERT INTO inbox_dismissals (company_id, user_id, item_key, kind, snoozed_until) VALUES ($1, $2, $3, $4, $5)
       ON CONFLICT (company_id, user_id, item_key) DO UPDATE SET kind = EXCLUDED.kind, snoozed_until = EXCLUDED.snoozed_until, updated_at = now()
       RETURNING ${DISMISSAL_COLUMNS}`,
      [userId, itemKey, kind, snoozedUntil],
    );
    return toDismissal(row);
  }

  /** How many of the item keys the user has not dismissed or currently snoozed. */
  async countUndismissed(companyId: string, userId: string, keys: string[]): Promise<number> {
    const [{ count }] = await this.rows<{ count: number }>(
      companyId,
      `SELECT count(*)::int AS count FROM unnest($3::text[]) AS k(item_key)
            WHERE NOT EXISTS (SELECT 1 FROM inbox_dismissals d WHERE d.company_id = $1 AND d.user_id = $2 AND d.item_key = k.item_key AND ${ACTIVE})`,
      [userId, keys],
    );
    return count;
  }

  /** Whether a table exists (the inbox reads tables of modules that may not have created theirs). */
  async tableExists(table: string): Promise<boolean> {
    const [{ present }] = await this.unscoped<{ present: boolean }>(
      'a schema question (the catalog), about no company',
      `SELECT to_regclass($1) IS NOT NULL AS present`,
      [`public.${table}`],
    );
    return present;
  }

  // the inbox counts below read approvals (owned by approvals), join_requests (owned by access) and
  // heartbeat_runs (owned by heartbeat): FOREIGN_READS

  async pendingApprovalIds(companyId: string): Promise<string[]> {
    return (await this.rows<{ id: string }>(companyId, `SELECT id FROM approvals WHERE company_id = $1 AND status = 'pending'`)).map(
      (r) => r.id,
    );
  }

  async pendingJoinRequestIds(companyId: string): Promise<string[]> {
    return (
      await this.rows<{ id: string }>(
        companyId,
        `SELECT id FROM join_requests WHERE company_id = $1 AND status IN ('pending', 'pending_approval')`,
      )
    ).map((r) => r.id);
  }

  async recentlyFailedRunIds(companyId: string): Promise<string[]> {
    return (
      await this.rows<{ id: string }>(
        companyId,
        `SELECT id FROM heartbeat_runs
          WHERE company_id = $1 AND status IN ('failed', 'timed_out') AND finished_at > now() - interval '24 hours'`,
      )
    ).map((r) => r.id);
  }

  // ---- resource memberships

  async storedMemberships(
    companyId: string,
    userId: string,
  ): Promise<Array<{ resourceType: ResourceType; resourceId: string; state: MembershipState }>> {
    return this.rows(
      companyId,
      `SELECT resource_type AS "resourceType", resource_id AS "resourceId", state FROM resource_memberships WHERE company_id = $1 AND user_id = $2`,
      [userId],
    );
  }

  /** When the user's memberships last changed, or null. */
  async membershipsUpdatedAt(companyId: string, userId: string): Promise<string | null> {
    const [{ updatedAt }] = await this.rows<{ updatedAt: Date | null }>(
      companyId,
      `SELECT max(updated_at) AS "updatedAt" FROM resource_memberships WHERE company_id = $1 AND user_id = $2`,
      [userId],
    );
    return iso(updatedAt);
  }

  // the resources a user may join or leave read projects (owned by projects) and agents (owned by agents): FOREIGN_READS

  /** Ids of the company's projects or (live) agents, oldest first. */
  async resourceIds(companyId: string, type: ResourceType): Promise<string[]> {
    const rows =
      type === 'project'
        ? await this.rows<{ id: string }>(companyId, `SELECT id FROM projects WHERE company_id = $1 ORDER BY created_at, id`)
        : await this.rows<{ id: string }>(
            companyId,
            `SELECT id FROM agents WHERE company_id = $1 AND status <> 'terminated' ORDER BY created_at, id`,
          );
    return rows.map((r) => r.id);
  }

  async resourceExists(companyId: string, type: ResourceType, resourceId: string): Promise<boolean> {
    const rows =
      type === 'project'
        ? await this.rows(companyId, `SELECT id FROM projects WHERE company_id = $1 AND id = $2`, [resourceId])
        : await this.rows(companyId, `SELECT id FROM agents WHERE company_id = $1 AND status <> 'terminated' AND id = $2`, [resourceId]);
    return rows.length > 0;
  }

  /** Conditional write: true only when the membership actually changed to `left` (also under concurrent requests). */
  async markLeft(companyId: string, userId: string, type: ResourceType, resourceId: string): Promise<boolean> {
    const changed = await this.rows(
      companyId,
      `INSERT INTO resource_memberships AS m (company_id, user_id, resource_type, resource_id, state) VALUES ($1, $2, $3, $4, 'left')
             ON CONFLICT (company_id, user_id, resource_type, resource_id)
             DO UPDATE SET state = 'left', updated_at = now() WHERE m.state <> 'left' RETURNING 1`,
      [userId, type, resourceId],
    );
    return changed.length > 0;
  }

  /** Conditional write: true only when a stored `left` actually changed back to `joined`. */
  async markJoined(companyId: string, userId: string, type: ResourceType, resourceId: string): Promise<boolean> {
    const changed = await this.rows(
      companyId,
      // (a CTE: a bare UPDATE answers [rows, count] through the driver)
      `WITH changed AS (
               UPDATE resource_memberships SET state = 'joined', updated_at = now()
                WHERE company_id = $1 AND user_id = $2 AND resource_type = $3 AND resource_id = $4 AND state <> 'joined' RETURNING 1)
             SELECT * FROM changed`,
      [userId, type, resourceId],
    );
    return changed.length > 0;
  }

  async membership(
    companyId: string,
    userId: string,
    type: ResourceType,
    resourceId: string,
  ): Promise<{ state: MembershipState; updatedAt: string } | null> {
    const row = await this.row<{ state: MembershipState; updatedAt: Date }>(
      companyId,
      `SELECT state, updated_at AS "updatedAt" FROM resource_memberships WHERE company_id = $1 AND user_id = $2 AND resource_type = $3 AND resource_id = $4`,
      [userId, type, resourceId],
    );
    return row ? { state: row.state, updatedAt: isoRequired(row.updatedAt) } : null;
  }

  /** Every user's membership of a project that is being deleted (its id is unique across companies). */
  async deleteMembershipsOfProject(projectId: string): Promise<void> {
    await this.unscoped(
      "the projects module deletes a project it has resolved and locked in the caller's company; project ids are unique across companies",
      `DELETE FROM resource_memberships WHERE resource_type = 'project' AND resource_id = $1`,
      [projectId],
    );
  }

  // ---- sidebar preferences (the global document has no company)

  async globalSidebar(userId: string): Promise<SidebarPreferencesRecord | undefined> {
    const row = await this.unscopedRow<SidebarPreferencesRecord>(
      GLOBAL_SIDEBAR,
      `SELECT ${SIDEBAR_COLUMNS} FROM sidebar_preferences WHERE user_id = $1 AND company_id IS NULL`,
      [userId],
    );
    return row ?? undefined;
  }

  async putGlobalSidebar(userId: string, preferences: Record<string, unknown>): Promise<SidebarPreferencesRecord> {
    const [row] = await this.unscoped<SidebarPreferencesRecord>(
      GLOBAL_SIDEBAR,
      `INSERT INTO sidebar_preferences (user_id, company_id, preferences) VALUES ($1, NULL, $2)
       ON CONFLICT (user_id) WHERE company_id IS NULL DO UPDATE SET preferences = EXCLUDED.preferences, updated_at = now()
       RETURNING ${SIDEBAR_COLUMNS}`,
      [userId, JSON.stringify(preferences)],
    );
    return row;
  }

  async companySidebar(userId: string, companyId: string): Promise<SidebarPreferencesRecord | undefined> {
    const row = await this.row<SidebarPreferencesRecord>(
      companyId,
      `SELECT ${SIDEBAR_COLUMNS} FROM sidebar_preferences WHERE company_id = $1 AND user_id = $2`,
      [userId],
    );
    return row ?? undefined;
  }

  async putCompanySidebar(userId: string, companyId: string, preferences: Record<string, unknown>): Promise<SidebarPreferencesRecord> {
    const [row] = await this.rows<SidebarPreferencesRecord>(
      companyId,
      `INSERT INTO sidebar_preferences (company_id, user_id, preferences) VALUES ($1, $2, $3)
       ON CONFLICT (user_id, company_id) WHERE company_id IS NOT NULL DO UPDATE SET preferences = EXCLUDED.preferences, updated_at = now()
       RETURNING ${SIDEBAR_COLUMNS}`,
      [userId, JSON.stringify(preferences)],
    );
    return row;
  }

  /** Which of the ids are the company's own projects or agents (reads projects and agents: FOREIGN_READS). */
  async ownIds(companyId: string, table: 'projects' | 'agents', ids: string[]): Promise<Set<string>> {
    const rows =
      table === 'projects'
        ? await this.rows<{ id: string }>(companyId, `SELECT id FROM projects WHERE company_id = $1 AND id = ANY($2::uuid[])`, [ids])
        : await this.rows<{ id: string }>(companyId, `SELECT id FROM agents WHERE company_id = $1 AND id = ANY($2::uuid[])`, [ids]);
    return new Set(rows.map((r) => r.id));
  }
}
