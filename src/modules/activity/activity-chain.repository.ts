import { Injectable } from '@nestjs/common';
import type { ChainContent } from '../../common/activity/activity-chain';
import type { ActivityLogRow } from '../../common/activity/activity.entity';
import { CHAIN_MICROS_SQL, chainContentOfRow } from '../../common/activity/activity.repository';
import { CompanyScopedRepository } from '../../database/company-scoped.repository';
import { Db } from '../../database/db.service';

export interface ChainHeadRecord {
  seq: string;
  hash: Buffer;
  lastId: string;
}

/** A chained record as verify and export read it (sequence and time as exact decimal strings). */
export interface ChainRecord extends ChainContent {
  seq: string;
  hash: Buffer;
  prevId: string | null;
  createdAt: string;
  micros: string;
}

interface ChainRecordRow extends ActivityLogRow {
  seq: string;
  hash: Buffer;
  prev_id: string | null;
  created_at: string;
  micros: string;
}

const toChainRecord = (r: ChainRecordRow): ChainRecord => ({
  ...chainContentOfRow(r),
  seq: r.seq,
  hash: r.hash,
  prevId: r.prev_id,
  createdAt: r.created_at,
  micros: r.micros,
});

export interface AnchorRecord {
  id: string;
  companyId: string;
  seq: string;
  hash: Buffer;
  anchoredAt: Date;
  keyId: string;
  publicKey: string;
  signature: Buffer;
}

const ANCHOR_COLUMNS = `id, company_id AS "companyId", seq::text AS seq, hash, anchored_at AS "anchoredAt", key_id AS "keyId",
  public_key AS "publicKey", signature`;

export interface NewAnchor {
  companyId: string;
  seq: string;
  hash: Buffer;
  anchoredAt: Date;
  keyId: string;
  publicKey: string;
  signature: Buffer;
  instanceId: string;
}

/** The activity chain: its heads, its records in sequence order, and the signed anchors (activity_chain_* tables). */
/** The columns of a chain record (ChainRecordRow, mapped to ChainRecord), as the verifier and the export read them. */
const CHAIN_RECORD_COLUMNS = `id, company_id, actor_type, actor_id, action, entity_type, entity_id, agent_id, run_id, details,
              chain_seq::text AS seq, chain_hash AS hash, chain_prev_id AS prev_id,
              to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS created_at,
              ${CHAIN_MICROS_SQL('created_at')}::text AS micros`;

@Injectable()
export class ActivityChainRepository extends CompanyScopedRepository {
  constructor(db: Db) {
    super(db);
  }

  head(companyId: string): Promise<ChainHeadRecord | null> {
    return this.row(companyId, `SELECT seq::text AS seq, hash, last_id AS "lastId" FROM activity_chain_heads WHERE company_id = $1`);
  }

  /** Records with sequence numbers in (after, upTo], in order, at most `limit` (keyset on the unique (company_id, chain_seq) index). */
  async records(companyId: string, after: string, upTo: string, limit: number): Promise<ChainRecord[]> {
    const rows = await this.rows<ChainRecordRow>(
      companyId,
      `SELECT ${CHAIN_RECORD_COLUMNS}
         FROM activity_log
        WHERE company_id = $1 AND chain_seq > $2::bigint AND chain_seq <= $3::bigint
        ORDER BY chain_seq LIMIT $4`,
      [after, upTo, limit],
    );
    return rows.map(toChainRecord);
  }

  /** The first record, if any: a company without a chain head must have none. */
  async anyRecord(companyId: string): Promise<string | null> {
    const r = await this.row<{ id: string }>(companyId, `SELECT id FROM activity_log WHERE company_id = $1 ORDER BY chain_seq LIMIT 1`);
    return r?.id ?? null;
  }

  /** Anchors with sequence numbers in (after, upTo], in order. */
  anchors(companyId: string, after: string, upTo: string): Promise<AnchorRecord[]> {
    return this.rows(
      companyId,
      `SELECT ${ANCHOR_COLUMNS}
         FROM activity_chain_anchors WHERE company_id = $1 AND seq > $2::bigint AND seq <= $3::bigint ORDER BY seq, anchored_at`,
      [after, upTo],
    );
  }

  /** Whether an anchor names a record past the current head (the chain was cut back), in one snapshot. */
  async anchorBeyondHead(companyId: string): Promise<boolean> {
    const r = await this.row<{ beyond: boolean }>(
      companyId,
      `SELECT EXISTS (SELECT 1 FROM activity_chain_anchors a WHERE a.company_id = $1
                         AND a.seq > coalesce((SELECT h.seq FROM activity_chain_heads h WHERE h.company_id = $1), 0)) AS beyond`,
    );
    return r?.beyond ?? false;
  }

  /**
   * The first record past the company's chain head, in one snapshot with the head (a record and its
   * head move in one transaction, so one appended meanwhile is never taken for a stray): a row
   * inserted behind the service's back with a sequence number beyond the head.
   */
  firstBeyondHead(companyId: string): Promise<{ id: string; seq: string } | null> {
    return this.row(
      companyId,
      `SELECT l.id, l.chain_seq::text AS seq FROM activity_log l
        WHERE l.company_id = $1 AND l.chain_seq > coalesce((SELECT h.seq FROM activity_chain_heads h WHERE h.company_id = $1), 0)
        ORDER BY l.chain_seq LIMIT 1`,
    );
  }

  /** Records past the company's chain head (same snapshot rule as firstBeyondHead), for the export. */
  async beyondHead(companyId: string, limit: number): Promise<ChainRecord[]> {
    const rows = await this.rows<ChainRecordRow>(
      companyId,
      `SELECT ${CHAIN_RECORD_COLUMNS}
         FROM activity_log
        WHERE company_id = $1 AND chain_seq > coalesce((SELECT h.seq FROM activity_chain_heads h WHERE h.company_id = $1), 0)
        ORDER BY chain_seq LIMIT $2`,
      [limit],
    );
    return rows.map(toChainRecord);
  }

  /** A page of anchors up to seq `upTo`, in (seq, id) order, after the given one. */
  anchorPage(companyId: string, after: { seq: string; id: string } | null, upTo: string, limit: number): Promise<AnchorRecord[]> {
    return this.rows(
      companyId,
      `SELECT ${ANCHOR_COLUMNS}
         FROM activity_chain_anchors
        WHERE company_id = $1 AND seq <= $2::bigint AND (seq, id) > ($3::bigint, $4::uuid)
        ORDER BY seq, id LIMIT $5`,
      [upTo, after?.seq ?? '0', after?.id ?? '00000000-0000-0000-0000-000000000000', limit],
    );
  }

  async insertAnchor(a: NewAnchor): Promise<AnchorRecord> {
    const [row] = await this.rows<AnchorRecord>(
      a.companyId,
      `INSERT INTO activity_chain_anchors (company_id, seq, hash, anchored_at, key_id, public_key, signature, instance_id)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
       RETURNING ${ANCHOR_COLUMNS}`,
      [a.seq, a.hash, a.anchoredAt, a.keyId, a.publicKey, a.signature, a.instanceId],
    );
    return row;
  }

  /** Companies whose chain head is past their newest anchor (an instance sweep across companies). */
  async unanchoredHeads(afterCompanyId: string, limit: number): Promise<Array<{ companyId: string; seq: string; hash: Buffer }>> {
    return this.unscoped(
      'the anchoring sweep across companies (one instance claims the round): chain heads past their newest anchor',
      `SELECT h.company_id AS "companyId", h.seq::text AS seq, h.hash FROM activity_chain_heads h
        WHERE h.company_id > $1::uuid
          AND h.seq > coalesce((SELECT max(a.seq) FROM activity_chain_anchors a WHERE a.company_id = h.company_id), 0)
        ORDER BY h.company_id LIMIT $2`,
      [afterCompanyId, limit],
    );
  }

  /** Claims the anchoring round when it is due: a conditional update of the one schedule row, so one instance wins it. */
  async claimAnchorRound(instanceId: string, intervalSec: number): Promise<boolean> {
    const rows = await this.unscopedReturning<{ id: number }>(
      'the instance-wide schedule row of the anchoring round (no company)',
      `UPDATE activity_anchor_schedule
          SET next_due_at = now() + make_interval(secs => $2), last_claimed_at = now(), last_claimed_by = $1
        WHERE id = 1 AND (next_due_at IS NULL OR next_due_at <= now()) RETURNING id`,
      [instanceId, intervalSec],
    );
    return rows.length > 0;
  }
}
