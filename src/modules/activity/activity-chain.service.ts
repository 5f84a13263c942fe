import { Injectable, Logger } from '@nestjs/common';
import { CHAIN_VERSION, chainContentOf, chainHash, contentDigest, GENESIS_HASH } from '../../common/activity/activity-chain';
import { AppConfig } from '../../config/app-config';
import { Db } from '../../database/db.service';
import { ActivityChainRepository, AnchorRecord, ChainRecord } from './activity-chain.repository';
import { AnchorLedger, LedgerAnchor } from './anchor-ledger';
import { AuditSigner } from './audit-signer';
import type { ActivityAnchorResponseDto, ChainVerifyResponseDto } from './dto/activity-chain.dto';

const BATCH = 2000;

export type BrokenReason =
  | 'hash_mismatch'
  | 'missing_record'
  | 'prev_mismatch'
  | 'head_mismatch'
  | 'anchor_mismatch'
  | 'anchor_signature'
  | 'anchor_untrusted_key'
  | 'anchor_missing'
  | 'record_beyond_head'
  | 'unchained_record';

export function toAnchorResponse(a: AnchorRecord): ActivityAnchorResponseDto {
  return {
    id: a.id,
    companyId: a.companyId,
    seq: a.seq,
    hash: a.hash.toString('hex'),
    anchoredAt: a.anchoredAt.toISOString(),
    keyId: a.keyId,
    publicKey: a.publicKey,
    signature: a.signature.toString('base64'),
  };
}

/**
 * The tamper-evident activity log (docs/audit-chain.md): verification of a company's chain, its
 * export for auditors, and the signed anchors of its head.
 */
@Injectable()
export class ActivityChainService {
  private readonly logger = new Logger('ActivityChain');

  constructor(
    private readonly repo: ActivityChainRepository,
    private readonly signer: AuditSigner,
    private readonly config: AppConfig,
    private readonly ledger: AnchorLedger,
    private readonly db: Db,
  ) {}

  /**
   * Walks the company's chain up to the head read first (records appended meanwhile are not looked
   * at), in batches, recomputing every hash; stops at the first broken record. Anchors count only
   * when signed by a key this instance trusts (its own, SERVICE_AUDIT_TRUSTED_KEYS), never by the key
   * in their own row; the newest anchor this instance made (its ledger, outside the database) must
   * still be there; and no record may sit past the head.
   */
  async verify(companyId: string): Promise<ChainVerifyResponseDto> {
    let checked = 0;
    let anchorsChecked = 0;
    const broken = (id: string | null, reason: BrokenReason, seq: string | null) => ({
      ok: false,
      checked,
      firstBrokenId: id,
      reason,
      seq,
      anchorsChecked,
    });
    const ledger = this.ledger.newest(companyId);
    const head = await this.repo.head(companyId);
    if (!head) {
      const stray = await this.repo.anyRecord(companyId);
      if (stray) return broken(stray, 'unchained_record', null);
      if (ledger || (await this.repo.anchorBeyondHead(companyId))) return broken(null, 'missing_record', '1');
      return { ok: true, checked, firstBrokenId: null, reason: null, seq: null, anchorsChecked };
    }
    let prev: Buffer = GENESIS_HASH;
    let prevId: string | null = null;
    let expected = 1n;
    let ledgerFound = false;
    const headSeq = BigInt(head.seq);
    for (;;) {
      const after = (expected - 1n).toString();
      const rows = await this.repo.records(companyId, after, head.seq, BATCH);
      if (!rows.length) break;
      const last = rows[rows.length - 1].seq;
      const anchors = await this.repo.anchors(companyId, after, last);
      let a = 0;
      for (const r of rows) {
        const seq = BigInt(r.seq);
        // a gap: the record the next one names as its predecessor is gone
        if (seq !== expected) return broken(r.prevId ?? r.id, 'missing_record', expected.toString());
        if (r.prevId !== prevId) return broken(r.id, 'prev_mismatch', r.seq);
        const hash = chainHash(prev, contentDigest(chainContentOf(r)), seq, BigInt(r.micros));
        if (!hash.equals(r.hash)) return broken(r.id, 'hash_mismatch', r.seq);
        for (; a < anchors.length && anchors[a].seq === r.seq; a++) {
          const an = anchors[a];
          if (!an.hash.equals(hash)) return broken(r.id, 'anchor_mismatch', r.seq);
          const verdict = this.signer.check(
            { companyId: an.companyId, seq: an.seq, hash: an.hash, anchoredAt: an.anchoredAt },
            an.keyId,
            an.signature,
          );
          if (verdict === 'untrusted_key') return broken(r.id, 'anchor_untrusted_key', r.seq);
          if (verdict === 'bad_signature') return broken(r.id, 'anchor_signature', r.seq);
          if (ledger && sameAnchor(ledger, an)) ledgerFound = true;
          anchorsChecked++;
        }
        if (ledger?.seq === r.seq && ledger.hash !== hash.toString('hex')) return broken(r.id, 'anchor_mismatch', r.seq);
        prev = hash;
        prevId = r.id;
        expected++;
        checked++;
      }
      if (rows.length < BATCH) break;
    }
    if (expected - 1n < headSeq) return broken(expected === headSeq ? head.lastId : null, 'missing_record', expected.toString());
    if (!prev.equals(head.hash) || prevId !== head.lastId) return broken(prevId, 'head_mismatch', head.seq);
    if (await this.repo.anchorBeyondHead(companyId)) return broken(null, 'missing_record', (headSeq + 1n).toString());
    // the database lost what this instance signed: records cut back below it, or its anchor row deleted
    if (ledger && BigInt(ledger.seq) > headSeq) return broken(null, 'missing_record', (headSeq + 1n).toString());
    if (ledger && !ledgerFound) return broken(null, 'anchor_missing', ledger.seq);
    const stray = await this.repo.firstBeyondHead(companyId);
    if (stray) return broken(stray.id, 'record_beyond_head', stray.seq);
    return { ok: true, checked, firstBrokenId: null, reason: null, seq: null, anchorsChecked };
  }

  /**
   * The chain as JSON lines: a header (with this instance's public key), the anchors, the records in
   * sequence order, an end line. Read in batches up to the head read first.
   */
  async *exportLines(companyId: string): AsyncGenerator<string> {
    const head = await this.repo.head(companyId);
    const headSeq = head?.seq ?? '0';
    yield (
      JSON.stringify({
        type: 'header',
        format: 'service-activity-chain',
        version: CHAIN_VERSION,
        companyId,
        exportedAt: new Date().toISOString(),
        headSeq,
        headHash: head ? head.hash.toString('hex') : null,
        publicKeys: this.signer.trustedKeys(),
        // the newest anchor this instance signed, from its data directory (not the database)
        newestAnchor: this.ledger.newest(companyId),
      }) + '\n'
    );
    // the anchors first: a verifier then knows which hashes to compare while it streams the records
    let lastAnchor: AnchorRecord | null = null;
    for (;;) {
      const page = await this.repo.anchorPage(companyId, lastAnchor, headSeq, BATCH);
      for (const a of page) yield JSON.stringify({ type: 'anchor', ...toAnchorResponse(a) }) + '\n';
      if (page.length < BATCH) break;
      lastAnchor = page[page.length - 1];
    }
    let records = 0;
    let after = '0';
    for (;;) {
      const rows = await this.repo.records(companyId, after, headSeq, BATCH);
      for (const r of rows) {
        records++;
        yield JSON.stringify({ type: 'record', ...recordLine(r) }) + '\n';
      }
      if (rows.length < BATCH) break;
      after = rows[rows.length - 1].seq;
    }
    // rows behind the head's back: listed so that an offline check reports them as the route does
    for (const r of await this.repo.beyondHead(companyId, BATCH)) yield JSON.stringify({ type: 'beyond_head', ...recordLine(r) }) + '\n';
    yield JSON.stringify({ type: 'end', records }) + '\n';
  }

  /** Signs the company's current chain head and stores the anchor. */
  async anchor(companyId: string): Promise<ActivityAnchorResponseDto | null> {
    const head = await this.repo.head(companyId);
    if (!head) return null;
    return toAnchorResponse(await this.store(companyId, head.seq, head.hash));
  }

  /** One anchoring round across companies: each chain head past its newest anchor is signed; failures stay per company. */
  async anchorAll(): Promise<number> {
    let made = 0;
    let after = '00000000-0000-0000-0000-000000000000';
    for (;;) {
      const heads = await this.repo.unanchoredHeads(after, 500);
      for (const h of heads) {
        try {
          await this.store(h.companyId, h.seq, h.hash);
          made++;
        } catch (err) {
          this.logger.error(`anchoring company ${h.companyId} failed: ${(err as Error).message}`);
        }
      }
      if (heads.length < 500) return made;
      after = heads[heads.length - 1].companyId;
    }
  }

  private async store(companyId: string, seq: string, hash: Buffer): Promise<AnchorRecord> {
    // the signature covers the time at millisecond precision, as the stored value reads back
    const anchoredAt = new Date(Date.now());
    const signature = this.signer.sign({ companyId, seq, hash, anchoredAt });
    const row = await this.repo.insertAnchor({
      companyId,
      seq,
      hash,
      anchoredAt,
      keyId: this.signer.keyId,
      publicKey: this.signer.publicKey,
      signature,
      instanceId: this.config.instanceId,
    });
    // the ledger outside the database learns of it once the row is committed
    const entry = {
      seq,
      hash: hash.toString('hex'),
      anchoredAt: anchoredAt.toISOString(),
      keyId: this.signer.keyId,
      signature: signature.toString('base64'),
    };
    this.db.afterCommit(() => this.ledger.record(companyId, entry));
    return row;
  }
}

/** The ledger's anchor is this row (same position, hash, time and signature). */
function sameAnchor(l: LedgerAnchor, a: AnchorRecord): boolean {
  return (
    l.seq === a.seq &&
    l.hash === a.hash.toString('hex') &&
    l.anchoredAt === a.anchoredAt.toISOString() &&
    l.signature === a.signature.toString('base64')
  );
}

/** A record as an export line carries it (docs/audit-chain.md). */
function recordLine(r: ChainRecord) {
  return {
    seq: r.seq,
    ...chainContentOf(r),
    createdAt: r.createdAt,
    createdAtMicros: r.micros,
    prevId: r.prevId,
    hash: r.hash.toString('hex'),
  };
}
