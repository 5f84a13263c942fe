import { createHash } from 'node:crypto';

/**
 * The activity hash chain (version 1). Each company's records form one chain in commit order:
 *
 *   digest_n = SHA-256(canonical JSON of the record's content)
 *   hash_n   = SHA-256(hash_{n-1} || digest_n || int64be(n) || int64be(createdAt in µs since the epoch))
 *
 * with hash_0 = 32 zero bytes. The digest is computed here (the content is JSON, and Postgres'
 * jsonb text is not a canonical form); the chain step runs in SQL, under the company's chain head
 * row lock, because only there are the sequence number, the time and the previous hash known.
 * scripts/verify-activity-chain.js repeats these functions for auditors: change neither alone.
 */
export const CHAIN_VERSION = 1;
export const GENESIS_HASH = Buffer.alloc(32);

/** The content a record's digest covers, as stored (uuids lower case, texts well-formed). */
export interface ChainContent {
  id: string;
  companyId: string;
  actorType: string;
  actorId: string;
  action: string;
  entityType: string;
  entityId: string;
  agentId: string | null;
  runId: string | null;
  details: unknown;
}

/** The content a record's digest covers, picked from a record (in this order: the export's lines keep it). */
export function chainContentOf(r: ChainContent): ChainContent {
  return {
    id: r.id,
    companyId: r.companyId,
    actorType: r.actorType,
    actorId: r.actorId,
    action: r.action,
    entityType: r.entityType,
    entityId: r.entityId,
    agentId: r.agentId,
    runId: r.runId,
    details: r.details,
  };
}

/**
 * JSON with object keys sorted (UTF-16 code unit order) and no whitespace: RFC 8785 (JCS) for
 * values that came out of JSON.parse, which are the only ones a record holds.
 */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map((v) => canonicalJson(v)).join(',')}]`;
  const obj = value as Record<string, unknown>;
  const keys = Object.keys(obj)
    .filter((k) => obj[k] !== undefined)
    .sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson(obj[k])}`).join(',')}}`;
}

export function contentDigest(c: ChainContent): Buffer {
  const body = canonicalJson({
    v: CHAIN_VERSION,
    id: c.id,
    companyId: c.companyId,
    actorType: c.actorType,
    actorId: c.actorId,
    action: c.action,
    entityType: c.entityType,
    entityId: c.entityId,
    agentId: c.agentId,
    runId: c.runId,
    details: c.details ?? null,
  });
  return createHash('sha256').update(body, 'utf8').digest();
}

/** One chain step, as the SQL in ActivityLogRepository computes it. */
export function chainHash(prev: Buffer, digest: Buffer, seq: bigint, createdAtMicros: bigint): Buffer {
  const tail = Buffer.alloc(16);
  tail.writeBigInt64BE(seq, 0);
  tail.writeBigInt64BE(createdAtMicros, 8);
  return createHash('sha256').update(prev).update(digest).update(tail).digest();
}

/** A uuid as Postgres prints it (it also accepts upper case, braces and no hyphens). */
export function canonicalUuid(id: string): string {
  const hex = id.replace(/[{}-]/g, '').toLowerCase();
  if (!/^[0-9a-f]{32}$/.test(hex)) return id;
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** A text as Postgres stores it: lone surrogates become U+FFFD when the string is encoded as UTF-8. */
export function storedText(s: string): string {
  return Buffer.from(s, 'utf8').toString('utf8');
}

/** JSON details as they come back from a jsonb column (undefined dropped, dates as strings, …). */
export function storedJson(details: unknown): unknown {
  return details === null || details === undefined ? null : (JSON.parse(JSON.stringify(details)) as unknown);
}
