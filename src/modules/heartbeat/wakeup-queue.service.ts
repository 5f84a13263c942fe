import { Injectable } from '@nestjs/common';
import type { Actor } from '../../common/auth/actor';
import { Db } from '../../database/db.service';

export type WakeupSource = 'timer' | 'assignment' | 'on_demand' | 'automation';
export type WakeupTriggerDetail = 'manual' | 'ping' | 'callback' | 'system';

export interface WakeupInput {
  companyId: string;
  agentId: string;
  source: WakeupSource;
  triggerDetail?: WakeupTriggerDetail | null;
  reason?: string | null;
  /** e.g. `{ issueId, commentId }` */
  payload?: Record<string, unknown>;
  issueId?: string | null;
  idempotencyKey?: string | null;
  forceFreshSession?: boolean;
  requestedBy?: Actor;
}

export interface WakeupResult {
  wakeupId: string;
  status: string;
}

/**
 * The heartbeat engine's enqueue API: every wakeup (comments, mentions, assignments, blockers,
 * manual) is a durable row. The engine claims queued rows and turns them into runs.
 */
@Injectable()
export class WakeupQueue {
  private readonly listeners: Array<() => void> = [];

  constructor(private readonly db: Db) {}

  /** Called (after commit) whenever a wakeup is queued, so a dispatcher can act at once. */
  onQueued(listener: () => void): void {
    this.listeners.push(listener);
  }

  async enqueue(input: WakeupInput): Promise<WakeupResult> {
    const actor = input.requestedBy;
    const [row] = await this.db.query<{ id: string; status: string }>(
      `INSERT INTO agent_wakeup_requests
         (company_id, agent_id, source, trigger_detail, reason, payload, issue_id, idempotency_key, force_fresh_session,
          requested_by_actor_type, requested_by_actor_id)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) RETURNING id, status`,
      [
        input.companyId,
        input.agentId,
        input.source,
        input.triggerDetail ?? null,
        input.reason ?? null,
        input.payload ?? {},
        input.issueId ?? null,
        input.idempotencyKey ?? null,
        input.forceFreshSession ?? false,
        actor ? (actor.kind === 'agent' ? 'agent' : 'user') : 'system',
        actor ? (actor.kind === 'agent' ? actor.agentId : actor.userId) : 'system',
      ],
    );
    this.db.afterCommit(() => this.listeners.forEach((l) => l()));
    return { wakeupId: row.id, status: row.status };
  }
}
