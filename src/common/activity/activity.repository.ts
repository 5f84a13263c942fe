import { Injectable } from '@nestjs/common';
import { CompanyScopedRepository } from '../../database/company-scoped.repository';
import { Db } from '../../database/db.service';

/** What the recorder writes (the entity's columns without id and creation time). */
export interface ActivityRecordInput {
  companyId: string;
  actorType: string;
  actorId: string;
  action: string;
  entityType: string;
  entityId: string;
  agentId: string | null;
  runId: string | null;
  details: Record<string, unknown> | null;
}

/** Writes of the activity trail (append-only; the activity module's repository reads it). */
@Injectable()
export class ActivityLogRepository extends CompanyScopedRepository {
  constructor(db: Db) {
    super(db);
  }

  /** A plain INSERT: every mutation writes one, and the repository's save costs more CPU than the statement. */
  async insert(row: ActivityRecordInput): Promise<{ id: string; created_at: Date }> {
    const [saved] = await this.rows<{ id: string; created_at: Date }>(
      row.companyId,
      `INSERT INTO activity_log (company_id, actor_type, actor_id, action, entity_type, entity_id, agent_id, run_id, details)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING id, created_at`,
      [row.actorType, row.actorId, row.action, row.entityType, row.entityId, row.agentId, row.runId, row.details],
    );
    return saved;
  }
}
