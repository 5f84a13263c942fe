import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { Db } from '../../database/db.service';
import { ActivityActorType, ActivityEntity } from './activity.entity';
import { ActivityLogRepository, ActivityRecordInput } from './activity.repository';
import type { Actor } from '../auth/actor';
import { canonicalUuid, contentDigest, storedJson, storedText } from './activity-chain';
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

/** The records a transaction has written, appended to their chains just before its COMMIT. */
const PENDING = Symbol('activity.pending');

/**
 * Writes activity records in the caller's transaction. Details are always sanitised. Each record is
 * published on the live stream (`activity.logged`) once the transaction commits.
 *
 * Inside a transaction a record is appended to its company's hash chain with the transaction's last
 * statements (Db.beforeCommit), companies in id order: the chain head lock is the last lock the
 * transaction takes and is held only while Postgres runs the appends and the COMMIT.
 */
@Injectable()
export class ActivityRecorder {
  constructor(
    private readonly repo: ActivityLogRepository,
    private readonly events: LiveEventBus,
    private readonly db: Db,
  ) {}

  /** Records; inside a transaction the returned createdAt is this process' clock (the row gets the database's at COMMIT). */
  /** `lead`: the record of the change the transaction was made for; its live event precedes those of what it caused */
  async record(input: ActivityInput, opts: { lead?: boolean } = {}): Promise<ActivityEntity> {
    const row = this.prepare(input);
    const pending = this.db.txLocal(PENDING, () => {
      const rows: ActivityRecordInput[] = [];
      void this.db.beforeCommit(() => this.append(rows));
      return rows;
    });
    if (!pending) return this.insertNow(row, opts.lead);
    pending.push(row);
    this.publish(row, opts.lead);
    return this.entity(row, new Date());
  }

  /** Records at once (inside a transaction too), answering the stored creation time. */
  async recordNow(input: ActivityInput): Promise<ActivityEntity> {
    return this.insertNow(this.prepare(input));
  }

  private async insertNow(row: ActivityRecordInput & { actorType: ActivityActorType }, lead?: boolean): Promise<ActivityEntity> {
    const saved = await this.repo.insert(row);
    this.publish(row, lead);
    return this.entity(row, saved.createdAt);
  }

  private async append(rows: ActivityRecordInput[]): Promise<void> {
    const ordered = [...rows].sort((a, b) => (a.companyId < b.companyId ? -1 : a.companyId > b.companyId ? 1 : 0));
    for (const row of ordered) await this.db.sendWithCommit(() => this.repo.insert(row));
  }

  private prepare(input: ActivityInput): ActivityRecordInput & { actorType: ActivityActorType } {
    const a = input.actor;
    const uuidOrNull = (v: string | null) => (v === null ? null : canonicalUuid(v));
    const content = {
      id: randomUUID(),
      companyId: canonicalUuid(input.companyId),
      actorType: input.actorType ?? (a ? (a.kind === 'agent' ? 'agent' : 'user') : 'system'),
      actorId: storedText(input.actorId ?? (a ? (a.kind === 'agent' ? a.agentId : a.userId) : 'system')),
      action: storedText(input.action),
      entityType: storedText(input.entityType),
      entityId: storedText(input.entityId),
      agentId: uuidOrNull(input.agentId !== undefined ? input.agentId : a?.kind === 'agent' ? a.agentId : null),
      runId: uuidOrNull(input.runId !== undefined ? input.runId : a?.kind === 'agent' ? (a.runId ?? null) : null),
      details: input.details ? (storedJson(sanitizeDetails(input.details)) as Record<string, unknown>) : null,
    } satisfies Omit<ActivityEntity, 'createdAt'>;
    return { ...content, digest: contentDigest(content) };
  }

  private publish(row: ActivityRecordInput, lead?: boolean): void {
    const { companyId, digest: _digest, ...payload } = row;
    this.events.publish(companyId, 'activity.logged', payload, { lead });
  }

  private entity(row: ActivityRecordInput & { actorType: ActivityActorType }, createdAt: Date): ActivityEntity {
    const { digest: _digest, ...rest } = row;
    return { ...rest, createdAt };
  }
}
