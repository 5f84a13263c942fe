import { Injectable } from '@nestjs/common';
import { ActivityActorType, ActivityEntity } from './activity.entity';
import { ActivityLogRepository } from './activity.repository';
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
    private readonly repo: ActivityLogRepository,
    private readonly events: LiveEventBus,
  ) {}

  /** `lead`: the record of the change the transaction was made for; its live event precedes those of what it caused */
  async record(input: ActivityInput, opts: { lead?: boolean } = {}): Promise<ActivityEntity> {
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
    const saved = await this.repo.insert(row);
    const { companyId, ...payload } = row;
    this.events.publish(companyId, 'activity.logged', { id: saved.id, ...payload }, { lead: opts.lead });
    return { id: saved.id, createdAt: saved.created_at, ...row };
  }
}
