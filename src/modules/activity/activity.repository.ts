import { Injectable } from '@nestjs/common';
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

export interface ActivityRow {
  id: string;
  company_id: string;
  actor_type: string;
  actor_id: string;
  action: string;
  entity_type: string;
  entity_id: string;
  agent_id: string | null;
  run_id: string | null;
  details: Record<string, unknown> | null;
  created_at: Date;
  cursor_ts: string;
  /** the issue the record is about (entity type `issue`), for the audit view */
  issue: { id: string; identifier: string; title: string; status: string } | null;
}

/** Reads of the activity trail (the recorder in common/activity writes it). */
@Injectable()
export class ActivityRepository extends CompanyScopedRepository {
  constructor(db: Db) {
    super(db);
  }

  /**
   * Activity whose actor is an agent, newest first, `limit + 1` rows (index activity_agent_actor_idx),
   * with the issue a record is about (a read for the audit page, joined here for speed).
   */
  agentActions(companyId: string, opts: { after?: KeysetCursor; limit: number }): Promise<ActivityRow[]> {
    const params: unknown[] = [opts.limit + 1];
    let after = '';
    if (opts.after) {
      params.push(opts.after.createdAt, opts.after.id);
      after = `AND (a.created_at, a.id) < ($3::timestamptz, $4::uuid)`;
    }
    return this.rows(
      companyId,
      `SELECT a.*, a.created_at::text AS cursor_ts,
              CASE WHEN i.id IS NOT NULL THEN json_build_object('id', i.id, 'identifier', i.identifier, 'title', i.title, 'status', i.status) END AS issue
         FROM activity_log a
         LEFT JOIN issues i ON a.entity_type = 'issue' AND i.company_id = a.company_id
               AND i.id = CASE WHEN a.entity_id ~* '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$' THEN a.entity_id::uuid END
        WHERE a.company_id = $1 AND a.actor_type = 'agent' ${after} AND ${NOT_ABOUT_HIDDEN_ISSUE}
        ORDER BY a.created_at DESC, a.id DESC LIMIT $2`,
      params,
    );
  }
}
