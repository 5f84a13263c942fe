import { canonicalJson, chainHash, contentDigest, GENESIS_HASH } from '../../src/common/activity/activity-chain';
import { anchorMessage } from '../../src/modules/activity/audit-signer';
import { dbSpanName } from '../../src/common/tracing/sql-summary';

// the auditors' standalone script must compute exactly what the service computes
const script = require('../../scripts/verify-activity-chain.js') as {
  canonicalJson(v: unknown): string;
  contentDigest(r: Record<string, unknown>): Buffer;
  chainHash(prev: Buffer, digest: Buffer, seq: bigint, micros: bigint): Buffer;
  anchorMessage(a: Record<string, string>): Buffer;
};

const CONTENT = {
  id: '6f1c1d8e-1a2b-4c3d-8e9f-0a1b2c3d4e5f',
  companyId: '0b9e7c1a-2d3e-4f50-8a6b-7c8d9e0f1a2b',
  actorType: 'user',
  actorId: 'local-board',
  action: 'issue.created',
  entityType: 'issue',
  entityId: 'x',
  agentId: null,
  runId: null,
  details: { z: [1, 2.5, { b: 'ß', a: null }], a: 'é\u2028"\\', n: 1e21, t: true, u: undefined },
};

describe('activity chain recipe', () => {
  it('canonical JSON sorts keys at every level, drops undefined, writes numbers as JSON.stringify does', () => {
    expect(canonicalJson(CONTENT.details)).toBe('{"a":"é\u2028\\"\\\\","n":1e+21,"t":true,"z":[1,2.5,{"a":null,"b":"ß"}]}');
    expect(script.canonicalJson(CONTENT.details)).toBe(canonicalJson(CONTENT.details));
  });

  it('the script and the service agree on digests, chain hashes and anchor messages', () => {
    const digest = contentDigest(CONTENT);
    expect(script.contentDigest(CONTENT).equals(digest)).toBe(true);
    const h = chainHash(GENESIS_HASH, digest, 1n, 1763805600123456n);
    expect(script.chainHash(Buffer.alloc(32), digest, 1n, 1763805600123456n).equals(h)).toBe(true);
    const at = new Date('2025-11-22T10:00:00.123Z');
    expect(
      script
        .anchorMessage({ companyId: CONTENT.companyId, seq: '5', hash: h.toString('hex'), anchoredAt: at.toISOString() })
        .equals(anchorMessage({ companyId: CONTENT.companyId, seq: '5', hash: h, anchoredAt: at })),
    ).toBe(true);
  });
});

describe('database span names', () => {
  it('keep the statement kind and table only', () => {
    expect(dbSpanName(`SELECT * FROM issues WHERE title = 'secret'`)).toBe('SELECT issues');
    expect(dbSpanName(`  INSERT INTO "activity_log" (a) VALUES ($1)`)).toBe('INSERT activity_log');
    expect(dbSpanName(`WITH t AS (SELECT 1) UPDATE companies SET x = 1`)).toBe('WITH companies');
    expect(dbSpanName(`BEGIN`)).toBe('BEGIN');
    expect(dbSpanName(`SELECT pg_advisory_xact_lock(hashtext('goals:' || $1))`)).toBe('SELECT');
  });
});
