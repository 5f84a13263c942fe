import { Injectable } from '@nestjs/common';
import { ActivityActorType, ActivityEntity } from '../../modules/activity/activity.entity';
import { Db } from '../../database/db.service';
import type { Actor } from '../auth/actor';
import { sanitizeDetails } from './sanitize';

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

/** Writes activity records in the caller's transaction. Details are always sanitised. */
@Injectable()
export class ActivityRecorder {
  constructor(private readonly db: Db) {}

  async record(input: ActivityInput): Promise<ActivityEntity> {
    const a = input.actor;
    const row = this.db.repo(ActivityEntity).create({
      companyId: input.companyId,
      action: input.action,
      entityType: input.entityType,
      entityId: input.entityId,
      actorType: input.actorType ?? (a ? (a.kind === 'agent' ? 'agent' : 'user') : 'system'),
      actorId: input.actorId ?? (a ? (a.kind === 'agent' ? a.agentId : a.userId) : 'system'),
      agentId: input.agentId !== undefined ? input.agentId : a?.kind === 'agent' ? a.agentId : null,
      runId: input.runId !== undefined ? input.runId : a?.kind === 'agent' ? (a.runId ?? null) : null,
      details: input.details ? (sanitizeDetails(input.details) as Record<string, unknown>) : null,
    });
    return this.db.repo(ActivityEntity).save(row);
  }
}
