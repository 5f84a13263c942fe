import { Injectable } from '@nestjs/common';
import { ActivityActorType, ActivityEntity } from './activity.entity';
import { Db } from '../../database/db.service';
import type { Actor } from '../auth/actor';
import { sanitizeDetails } from './sanitize';
import { LiveEventBus } from '../events/live-event-bus';

export interface ActivityInput {
  companyId: string;
  action: string;
  entityType: string;
  entityId: string;
  /** who acted; omit for the system */
  actor?: Actor;
  actorType?: ActivityActorType;
  actorId?: string;
  agentId?: string | null;
  runId?: string | null;
  details?: Record<string, unknown> | null;
}

/**
 * Writes activity records in the caller's transaction. Details are always sanitised. Each record is
 * published on the live stream (`activity.logged`) once the transaction commits.
 */
@Injectable()
export class ActivityRecorder {
  constructor(
    private readonly db: Db,
    private readonly events: LiveEventBus,
  ) {}

  async record(input: ActivityInput): Promise<ActivityEntity> {
    const a = input.actor;
    const row = {
      companyId: input.companyId,
      action: input.action,
      entityType: input.entityType,
      entityId: input.entityId,
      actorType: input.actorType ?? (a ? (a.kind === 'agent' ? 'agent' : 'user') : 'system'),
      actorId: input.actorId ?? (a ? (a.kind === 'agent' ? a.agentId : a.userId) : 'system'),
      agentId: input.agentId !== undefined ? input.agentId : a?.kind === 'agent' ? a.agentId : null,
      runId: input.runId !== undefined ? input.runId : a?.kind === 'agent' ? (a.runId ?? null) : null,
      details: input.details ? (sanitizeDetails(input.details) as Record<string, unknown>) : null,
    } satisfies Omit<ActivityEntity, 'id' | 'createdAt'>;
    // a plain INSERT: every mutation writes one, and the repository's save costs more CPU than the statement
    const [saved] = await this.db.query<{ id: string; created_at: Date }>(
      `INSERT INTO activity_log (company_id, actor_type, actor_id, action, entity_type, entity_id, agent_id, run_id, details)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING id, created_at`,
      [row.companyId, row.actorType, row.actorId, row.action, row.entityType, row.entityId, row.agentId, row.runId, row.details],
    );
    const { companyId, ...payload } = row;
    this.events.publish(companyId, 'activity.logged', { id: saved.id, ...payload });
    return { id: saved.id, createdAt: saved.created_at, ...row };
  }
}
