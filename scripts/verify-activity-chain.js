#!/usr/bin/env node
// Offline check of an exported activity chain (GET /api/companies/{id}/activity/export), for
// auditors: node scripts/verify-activity-chain.js <export.jsonl> [--public-key <base64 SPKI> ...]
// Needs Node 18+ and nothing else. The recipe it follows is written down in docs/audit-chain.md;
// src/common/activity/activity-chain.ts and src/modules/activity/audit-signer.ts are the service's side.
'use strict';
const crypto = require('node:crypto');
const fs = require('node:fs');
const readline = require('node:readline');

const GENESIS = Buffer.alloc(32);

/** JSON with sorted object keys and no whitespace (RFC 8785 for JSON-parsed values). */
function canonicalJson(value) {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  const keys = Object.keys(value)
    .filter((k) => value[k] !== undefined)
    .sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson(value[k])}`).join(',')}}`;
}

/** SHA-256 of the record's canonical content. */
function contentDigest(r) {
  const body = canonicalJson({
    v: 1,
    id: r.id,
    companyId: r.companyId,
    actorType: r.actorType,
    actorId: r.actorId,
    action: r.action,
    entityType: r.entityType,
    entityId: r.entityId,
    agentId: r.agentId,
    runId: r.runId,
    details: r.details ?? null,
  });
  return crypto.createHash('sha256').update(body, 'utf8').digest();
}

/** hash_n = SHA-256(hash_{n-1} || digest_n || int64be(n) || int64be(createdAt µs)). */
function chainHash(prev, digest, seq, micros) {
  const tail = Buffer.alloc(16);
  tail.writeBigInt64BE(seq, 0);
  tail.writeBigInt64BE(micros, 8);
  return crypto.createHash('sha256').update(prev).update(digest).update(tail).digest();
}

/** The bytes an anchor's Ed25519 signature covers. */
function anchorMessage(a) {
  return Buffer.from(`service-activity-anchor/v1\n${a.companyId}\n${a.seq}\n${a.hash}\n${a.anchoredAt}`, 'utf8');
}

function keyIdOf(spkiBase64) {
  return crypto.createHash('sha256').update(Buffer.from(spkiBase64, 'base64')).digest('hex').slice(0, 16);
}

/** `2025-01-02T03:04:05.123456Z` in µs since the epoch. */
function isoMicros(iso) {
  const m = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})\.(\d{6})Z$/.exec(iso);
  if (!m) return null;
  return BigInt(Date.parse(`${m[1]}Z`)) * 1000n + BigInt(m[2]);
}

/**
 * Checks the lines of an export. `trustedKeys`: public keys (SPKI DER, base64) the auditor obtained
 * out of band; when empty, the keys named in the export's header are used (and the result says so).
 * Returns { ok, checked, anchorsChecked, firstBrokenId, reason, seq, trustedFrom }.
 */
async function verifyLines(lines, trustedKeys = []) {
  let header = null;
  const anchors = new Map();
  let prev = GENESIS;
  let prevId = null;
  let expected = 1n;
  let checked = 0;
  let anchorsChecked = 0;
  let ended = false;
  let trusted = new Set(trustedKeys);
  /** the newest anchor the instance signed (from its data directory, named in the header): it must be among the anchors */
  let newest = null;
  let newestFound = false;
  let stray = null;
  /** checks an anchor's signature with the trusted key its key id names; a reason, or null */
  const anchorProblem = (a) => {
    const spki = [...trusted].find((k) => keyIdOf(k) === a.keyId);
    if (!spki || (a.publicKey !== undefined && a.publicKey !== spki)) return 'anchor_untrusted_key';
    const key = crypto.createPublicKey({ key: Buffer.from(spki, 'base64'), format: 'der', type: 'spki' });
    return crypto.verify(null, anchorMessage(a), key, Buffer.from(a.signature, 'base64')) ? null : 'anchor_signature';
  };
  const expect = (seq, hash) => {
    const list = anchors.get(seq) ?? [];
    list.push(hash);
    anchors.set(seq, list);
  };
  const broken = (firstBrokenId, reason, seq) => ({ ok: false, checked, anchorsChecked, firstBrokenId, reason, seq: seq ?? null });
  for await (const raw of lines) {
    if (!raw.trim()) continue;
    const line = JSON.parse(raw);
    if (ended) return broken(null, 'data_after_end');
    if (line.type === 'header') {
      if (line.format !== 'service-activity-chain' || line.version !== 1) return broken(null, 'unknown_format');
      header = line;
      if (!trusted.size) trusted = new Set((line.publicKeys ?? []).map((k) => k.publicKey));
      if (line.newestAnchor) {
        newest = { ...line.newestAnchor, companyId: line.companyId };
        const problem = anchorProblem(newest);
        if (problem) return broken(null, problem, newest.seq);
      }
    } else if (line.type === 'anchor') {
      if (!header || line.companyId !== header.companyId) return broken(null, 'anchor_of_another_company', line.seq);
      const problem = anchorProblem(line);
      if (problem) return broken(null, problem, line.seq);
      if (
        newest &&
        newest.seq === line.seq &&
        newest.hash === line.hash &&
        newest.anchoredAt === line.anchoredAt &&
        newest.signature === line.signature
      )
        newestFound = true;
      expect(line.seq, line.hash);
    } else if (line.type === 'beyond_head') {
      stray ??= line;
    } else if (line.type === 'record') {
      if (!header || line.companyId !== header.companyId) return broken(line.id, 'record_of_another_company', line.seq);
      const seq = BigInt(line.seq);
      if (seq !== expected) return broken(line.prevId ?? line.id, 'missing_record', expected.toString());
      if (line.prevId !== prevId) return broken(line.id, 'prev_mismatch', line.seq);
      const micros = BigInt(line.createdAtMicros);
      if (isoMicros(line.createdAt) !== micros) return broken(line.id, 'time_mismatch', line.seq);
      const hash = chainHash(prev, contentDigest(line), seq, micros);
      if (hash.toString('hex') !== line.hash) return broken(line.id, 'hash_mismatch', line.seq);
      for (const anchored of anchors.get(line.seq) ?? []) {
        if (anchored !== line.hash) return broken(line.id, 'anchor_mismatch', line.seq);
        anchorsChecked++;
      }
      if (newest && newest.seq === line.seq && newest.hash !== line.hash) return broken(line.id, 'anchor_mismatch', line.seq);
      prev = hash;
      prevId = line.id;
      expected++;
      checked++;
    } else if (line.type === 'end') {
      if (line.records !== checked) return broken(null, 'record_count_mismatch');
      ended = true;
    }
  }
  if (!header) return broken(null, 'no_header');
  if (!ended) return broken(null, 'truncated');
  if (BigInt(header.headSeq) !== expected - 1n) return broken(null, 'missing_record', expected.toString());
  if (header.headHash !== null && header.headHash !== prev.toString('hex')) return broken(prevId, 'head_mismatch', header.headSeq);
  const pending = [...anchors.keys()].filter((s) => BigInt(s) >= expected);
  if (pending.length || (newest && BigInt(newest.seq) >= expected)) return broken(null, 'missing_record', expected.toString());
  if (newest && !newestFound) return broken(null, 'anchor_missing', newest.seq);
  if (stray) return broken(stray.id, 'record_beyond_head', stray.seq);
  return {
    ok: true,
    checked,
    anchorsChecked,
    firstBrokenId: null,
    reason: null,
    seq: null,
    trustedFrom: trustedKeys.length ? 'command line' : 'export header',
  };
}

async function main(argv) {
  const keys = [];
  let file;
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--public-key') keys.push(argv[++i]);
    else file = argv[i];
  }
  if (!file) {
    console.error('usage: verify-activity-chain.js <export.jsonl> [--public-key <base64 SPKI DER> ...]');
    return 2;
  }
  const lines = readline.createInterface({ input: fs.createReadStream(file), crlfDelay: Infinity });
  const result = await verifyLines(lines, keys);
  console.log(JSON.stringify(result));
  return result.ok ? 0 : 1;
}

module.exports = { canonicalJson, contentDigest, chainHash, anchorMessage, verifyLines };

if (require.main === module) {
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (err) => {
      console.error(err.message);
      process.exit(2);
    },
  );
}
