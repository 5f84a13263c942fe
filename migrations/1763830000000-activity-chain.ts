import { MigrationInterface, QueryRunner } from 'typeorm';
import { type ChainContent, chainHash, contentDigest, GENESIS_HASH } from '../src/common/activity/activity-chain';

interface LegacyRow {
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
  created_at: string;
  micros: string;
}

/** The content a row's digest covers (the service's repositories map their rows the same way). */
const chainContentOf = (r: LegacyRow): ChainContent => ({
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
});

const BATCH = 2000;

/**
 * The tamper-evident activity log (docs/audit-chain.md): each company's records form a hash chain
 * (sequence number, hash, previous record) whose head, one row per company, is locked by each append;
 * signed anchors of the heads; the schedule row that lets one instance anchor per interval. Existing
 * records are chained here in (created_at, id) order.
 */
export class ActivityChain1763830000000 implements MigrationInterface {
  name = 'ActivityChain1763830000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE activity_log ADD COLUMN chain_seq bigint, ADD COLUMN chain_hash bytea, ADD COLUMN chain_prev_id uuid`);
    await q.query(`
      CREATE TABLE activity_chain_heads (
        company_id uuid PRIMARY KEY REFERENCES companies(id) ON DELETE CASCADE,
        seq bigint NOT NULL,
        hash bytea NOT NULL,
        last_id uuid NOT NULL,
        prev_id uuid,
        at timestamptz NOT NULL
      )`);
    await q.query(`
      CREATE TABLE activity_chain_anchors (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        company_id uuid NOT NULL REFERENCES companies(id) ON DELETE CASCADE,
        seq bigint NOT NULL,
        hash bytea NOT NULL,
        anchored_at timestamptz NOT NULL,
        key_id text NOT NULL,
        public_key text NOT NULL,
        signature bytea NOT NULL,
        instance_id text NOT NULL
      )`);
    await q.query(`CREATE INDEX activity_chain_anchors_company_seq ON activity_chain_anchors (company_id, seq)`);
    await q.query(`
      CREATE TABLE activity_anchor_schedule (
        id int PRIMARY KEY CHECK (id = 1),
        next_due_at timestamptz,
        last_claimed_at timestamptz,
        last_claimed_by text
      )`);
    await q.query(`INSERT INTO activity_anchor_schedule (id) VALUES (1)`);

    await q.query(`ALTER TABLE activity_log DISABLE TRIGGER activity_log_no_update`);
    await this.chainExisting(q);
    await q.query(`ALTER TABLE activity_log ENABLE TRIGGER activity_log_no_update`);

    await q.query(`ALTER TABLE activity_log ALTER COLUMN chain_seq SET NOT NULL, ALTER COLUMN chain_hash SET NOT NULL`);
    await q.query(`CREATE UNIQUE INDEX activity_chain_seq_idx ON activity_log (company_id, chain_seq)`);
  }

  /** Chains the records written before this migration, company by company, oldest first. */
  private async chainExisting(q: QueryRunner): Promise<void> {
    let head: { companyId: string; seq: bigint; hash: Buffer; lastId: string; prevId: string | null; at: string } | null = null;
    const saveHead = async () => {
      if (!head) return;
      await q.query(`INSERT INTO activity_chain_heads (company_id, seq, hash, last_id, prev_id, at) VALUES ($1, $2, $3, $4, $5, $6)`, [
        head.companyId,
        head.seq.toString(),
        head.hash,
        head.lastId,
        head.prevId,
        head.at,
      ]);
    };
    let after: [string, string, string] | null = null;
    for (;;) {
      const rows = (await q.query(
        `SELECT id, company_id, actor_type, actor_id, action, entity_type, entity_id, agent_id, run_id, details,
                created_at::text AS created_at, (extract(epoch FROM created_at) * 1000000)::bigint::text AS micros
           FROM activity_log
          ${after ? `WHERE (company_id, created_at, id) > ($1::uuid, $2::timestamptz, $3::uuid)` : ''}
          ORDER BY company_id, created_at, id LIMIT ${BATCH}`,
        after ?? [],
      )) as LegacyRow[];
      if (!rows.length) break;
      const ids: string[] = [];
      const seqs: string[] = [];
      const hashes: Buffer[] = [];
      const prevs: (string | null)[] = [];
      for (const r of rows) {
        if (!head || head.companyId !== r.company_id) {
          await saveHead();
          head = { companyId: r.company_id, seq: 0n, hash: GENESIS_HASH, lastId: r.id, prevId: null, at: r.created_at };
        }
        const digest = contentDigest(chainContentOf(r));
        const seq: bigint = head.seq + 1n;
        const hash = chainHash(head.hash, digest, seq, BigInt(r.micros));
        ids.push(r.id);
        seqs.push(seq.toString());
        hashes.push(hash);
        prevs.push(head.seq === 0n ? null : head.lastId);
        head = { companyId: r.company_id, seq, hash, lastId: r.id, prevId: head.seq === 0n ? null : head.lastId, at: r.created_at };
      }
      await q.query(
        `UPDATE activity_log a SET chain_seq = u.seq, chain_hash = u.hash, chain_prev_id = u.prev
           FROM unnest($1::uuid[], $2::bigint[], $3::bytea[], $4::uuid[]) AS u(id, seq, hash, prev)
          WHERE a.id = u.id`,
        [ids, seqs, hashes, prevs],
      );
      const last = rows[rows.length - 1];
      after = [last.company_id, last.created_at, last.id];
    }
    await saveHead();
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE IF EXISTS activity_anchor_schedule, activity_chain_anchors, activity_chain_heads`);
    await q.query(`DROP INDEX IF EXISTS activity_chain_seq_idx`);
    await q.query(`ALTER TABLE activity_log DROP COLUMN IF EXISTS chain_seq, DROP COLUMN IF EXISTS chain_hash, DROP COLUMN IF EXISTS chain_prev_id`);
  }
}
