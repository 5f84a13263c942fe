import { Injectable } from '@nestjs/common';
import { CompanyScopedRepository } from '../../database/company-scoped.repository';
import { Db } from '../../database/db.service';
import type { ChainContent } from './activity-chain';
import type { ActivityLogRow } from './activity.entity';

/** What the recorder writes: the chain's content of the record (the entity's columns without creation time), and its digest. */
export interface ActivityRecordInput extends ChainContent {
  details: Record<string, unknown> | null;
  /** SHA-256 of the record's canonical content (activity-chain.ts) */
  digest: Buffer;
}

/** An activity_log row (as SQL returns it) as the content its digest covers. */
export function chainContentOfRow(r: ActivityLogRow): ChainContent & { details: Record<string, unknown> | null } {
  return {
    id: r.id,
    companyId: r.company_id,
    actorType: r.actor_type,
    actorId: r.actor_id,
    action: r.action,
    entityType: r.entity_type,
    entityId: r.entity_id,
    agentId: r.agent_id,
    runId: r.run_id,
    details: r.details,
  };
}

/** The record's time in µs since the epoch, as the chain hashes it (exact: extract gives numeric). */
export const CHAIN_MICROS_SQL = (col: string) => `(extract(epoch FROM ${col}) * 1000000)::bigint`;

const GENESIS_SQL = `'\\x${'00'.repeat(32)}'::bytea`;

/** Writes of the activity trail (append-only; the activity module's repository reads it). */
@Injectable()
export class ActivityLogRepository extends CompanyScopedRepository {
  constructor(db: Db) {
    super(db);
  }

  /**
   * Appends a record to its company's chain in one statement: the upsert of the chain head row
   * takes the next sequence number and computes the record's hash from the previous one (the head's
   * row lock orders the company's appends as they commit), then the record is inserted with them.
   * Each company has its own head: other companies' writes never wait on it.
   */
  async insert(row: ActivityRecordInput): Promise<{ id: string; createdAt: Date }> {
    const [saved] = await this.rows<{ id: string; createdAt: Date }>(
      row.companyId,
      `WITH t AS (SELECT clock_timestamp() AS at),
       h AS (
         INSERT INTO activity_chain_heads AS c (company_id, seq, hash, last_id, prev_id, at)
         SELECT $1, 1, sha256(${GENESIS_SQL} || $11::bytea || int8send(1::bigint) || int8send(${CHAIN_MICROS_SQL('t.at')})), $2, NULL, t.at FROM t
         ON CONFLICT (company_id) DO UPDATE
           SET seq = c.seq + 1,
               hash = sha256(c.hash || $11::bytea || int8send(c.seq + 1) || int8send(${CHAIN_MICROS_SQL('EXCLUDED.at')})),
               prev_id = c.last_id, last_id = EXCLUDED.last_id, at = EXCLUDED.at
         RETURNING seq, hash, prev_id, at)
       INSERT INTO activity_log (id, company_id, actor_type, actor_id, action, entity_type, entity_id, agent_id, run_id, details,
                                 created_at, chain_seq, chain_hash, chain_prev_id)
       SELECT $2, $1, $3, $4, $5, $6, $7, $8, $9, $10::jsonb, h.at, h.seq, h.hash, h.prev_id FROM h
       RETURNING id, created_at AS "createdAt"`,
      [
        row.id,
        row.actorType,
        row.actorId,
        row.action,
        row.entityType,
        row.entityId,
        row.agentId,
        row.runId,
        row.details === null ? null : JSON.stringify(row.details),
        row.digest,
      ],
    );
    return saved;
  }
}
