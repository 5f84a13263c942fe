import { Injectable } from '@nestjs/common';
import { chainContentOfRow } from '../../common/activity/activity.repository';
import { ActivityEntity, type ActivityLogRow } from '../../common/activity/activity.entity';
import type { KeysetCursor } from '../../common/http/keyset-cursor';
import { CompanyScopedRepository } from '../../database/company-scoped.repository';
import { Db } from '../../database/db.service';

/**
 * SQL: activity record `a` is not about a hidden issue. Activity of hidden issues stays out of the
 * feeds; non-issue activity is kept (looked up by primary key; a non-uuid entity id, possible
 * through POST, simply matches nothing).
 */
export const NOT_ABOUT_HIDDEN_ISSUE = `NOT (a.entity_type = 'issue' AND EXISTS (
      SELECT 1 FROM issues i WHERE i.hidden_at IS NOT NULL AND i.company_id = a.company_id
         AND i.id = CASE WHEN a.entity_id ~* '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$' THEN a.entity_id::uuid END))`;

/** A record of the audit page: the row, its time (as a Date and as the keyset cursor's text) and its issue. */
export interface ActivityRow extends ActivityLogRow {
  created_at: Date;
  cursorTs: string;
  /** the issue the record is about (entity type `issue`), for the audit view */
  issue: { id: string; identifier: string; title: string; status: string } | null;
}

/** An activity_log row (snake_case from SQL) as the entity: the chain's content of the row, and when. */
export function toActivityEntity(r: ActivityLogRow & { created_at: Date }): ActivityEntity {
  return { ...chainContentOfRow(r), createdAt: r.created_at } as ActivityEntity;
}

/** Reads of the activity trail (the recorder in common/activity writes it). */
@Injectable()
export class ActivityRepository extends CompanyScopedRepository {
  constructor(db: Db) {
    super(db);
  }

  /** The company's feed, newest first, exact-match filters (text comparison), hidden issues left out. */
  async listForCompany(companyId: string, f: { agentId?: string; entityType?: string; entityId?: string }): Promise<ActivityEntity[]> {
    const where = ['a.company_id = $1'];
    const params: unknown[] = [];
    const add = (col: string, v: string | undefined) => {
      if (v === undefined) return;
      params.push(v);
      where.push(`a.${col}::text = $${params.length + 1}`);
    };
    add('agent_id', f.agentId);
    add('entity_type', f.entityType);
    add('entity_id', f.entityId);
    where.push(NOT_ABOUT_HIDDEN_ISSUE);
    const rows = await this.rows<ActivityLogRow & { created_at: Date }>(
      companyId,
      `SELECT a.* FROM activity_log a
        WHERE ${where.join(' AND ')}
        ORDER BY a.created_at DESC, a.id DESC`,
      params,
    );
    return rows.map(toActivityEntity);
  }

  /** Records about one entity, newest first. */
  async findForEntity(companyId: string, entityType: string, entityId: string): Promise<ActivityEntity[]> {
    const rows = await this.rows<ActivityLogRow & { created_at: Date }>(
      companyId,
      `SELECT * FROM activity_log WHERE company_id = $1 AND entity_type = $2 AND entity_id = $3 ORDER BY created_at DESC, id DESC`,
      [entityType, entityId],
    );
    return rows.map(toActivityEntity);
  }

  /**
   * The audit: activity newest first, `limit + 1` rows; agents' actions only unless `allActors`
   * (index activity_agent_actor_idx for agents, the company's time index otherwise); exact filters;
   * with the issue a record is about (a read for the audit page, joined here for speed).
   */
  agentActions(
    companyId: string,
    opts: {
      after?: KeysetCursor;
      limit: number;
      allActors?: boolean;
      action?: string;
      entityType?: string;
      entityId?: string;
      agentId?: string;
      runId?: string;
      responsibleUserId?: string;
      from?: string;
      to?: string;
    },
  ): Promise<ActivityRow[]> {
    const params: unknown[] = [opts.limit + 1];
    const where: string[] = [];
    const add = (sql: (n: number) => string, v: unknown) => {
      if (v === undefined) return;
      params.push(v);
      where.push(sql(params.length + 1));
    };
    if (!opts.allActors) where.push(`a.actor_type = 'agent'`);
    if (opts.after) {
      params.push(opts.after.createdAt, opts.after.id);
      where.push(`(a.created_at, a.id) < ($${params.length}::timestamptz, $${params.length + 1}::uuid)`);
    }
    add((n) => `a.action = $${n}`, opts.action);
    add((n) => `a.entity_type = $${n}`, opts.entityType);
    add((n) => `a.entity_id = $${n}`, opts.entityId);
    add((n) => `a.agent_id = $${n}::uuid`, opts.agentId);
    add((n) => `a.run_id = $${n}::uuid`, opts.runId);
    // the user who acted (board actions; with the default agents scope nothing matches)
    add((n) => `a.actor_type = 'user' AND a.actor_id = $${n}`, opts.responsibleUserId);
    add((n) => `a.created_at >= $${n}::timestamptz`, opts.from);
    add((n) => `a.created_at < $${n}::timestamptz`, opts.to);
    return this.rows(
      companyId,
      `SELECT a.*, a.created_at::text AS "cursorTs",
              CASE WHEN i.id IS NOT NULL THEN json_build_object('id', i.id, 'identifier', i.identifier, 'title', i.title, 'status', i.status) END AS issue
         FROM activity_log a
         LEFT JOIN issues i ON a.entity_type = 'issue' AND i.company_id = a.company_id
               AND i.id = CASE WHEN a.entity_id ~* '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$' THEN a.entity_id::uuid END
        WHERE a.company_id = $1 ${where.map((w) => `AND ${w}`).join(' ')} AND ${NOT_ABOUT_HIDDEN_ISSUE}
        ORDER BY a.created_at DESC, a.id DESC LIMIT $2`,
      params,
    );
  }
}
