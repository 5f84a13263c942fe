import { execFile } from 'node:child_process';
import { generateKeyPairSync, randomUUID, sign } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { chainHash, contentDigest } from '../../src/common/activity/activity-chain';
import type { ActivityLogRow } from '../../src/common/activity/activity.entity';
import { chainContentOfRow } from '../../src/common/activity/activity.repository';
import { ActivityAnchorsScheduler } from '../../src/modules/activity/activity-anchors.jobs';
import { anchorMessage, AuditSigner, keyIdOf } from '../../src/modules/activity/audit-signer';
import { createAgentWithKey } from '../support/agents';
import { sqlClient } from '../support/backups';
import { bearer, createCompany } from '../support/factories';
import { createTestApp, createTestDatabase, TestApp } from '../support/test-app';
import { ActivityChain1763830000000 } from '../../migrations/1763830000000-activity-chain';
import type { QueryRunner } from 'typeorm';

const run = promisify(execFile);
const SCRIPT = path.join(__dirname, '..', '..', 'scripts', 'verify-activity-chain.js');

/** Runs SQL on a connection of its own with triggers (and rules) off, as someone with the superuser password would. */
async function behindTheBack(t: TestApp, sql: string, params: unknown[] = []): Promise<void> {
  const c = await sqlClient(t.databaseUrl);
  try {
    await c.query(`SET session_replication_role = replica`);
    await c.query(sql, params);
  } finally {
    await c.end();
  }
}

/** Activity from parallel writers through HTTP: issues, comments, custom records. */
async function busy(t: TestApp, companyId: string, writers = 24): Promise<void> {
  const results = await Promise.all(
    Array.from({ length: writers }, async (_, i) => {
      const issue = await t.http.post(`/api/companies/${companyId}/issues`).send({ title: `busy ${i}` });
      if (issue.status !== 201) return issue.status;
      const [comment, patch, custom] = await Promise.all([
        t.http.post(`/api/issues/${issue.body.id}/comments`).send({ body: `comment ${i}` }),
        t.http.patch(`/api/issues/${issue.body.id}`).send({ priority: 'high' }),
        t.http.post(`/api/companies/${companyId}/activity`).send({
          actorId: `writer-${i}`,
          action: 'custom.parallel',
          entityType: 'widget',
          entityId: `w${i}`,
          details: { i, ü: 'ß', n: 1.5 },
        }),
      ]);
      return [comment.status, patch.status, custom.status].find((s) => s >= 300) ?? 201;
    }),
  );
  expect(results.filter((s) => s !== 201)).toEqual([]);
}

/**
 * The forger's rewrite: record `index` gets another actor, every hash after it and the head are
 * recomputed consistently (triggers off). Returns the new hash of each position (decimal seq -> hash).
 */
async function rewriteChain(t: TestApp, companyId: string, index: number): Promise<Map<string, Buffer>> {
  const rows: Array<Record<string, any>> = await t.dataSource.query(
    `SELECT *, chain_seq::text AS seq, (extract(epoch FROM created_at) * 1000000)::bigint::text AS micros
       FROM activity_log WHERE company_id = $1 ORDER BY chain_seq`,
    [companyId],
  );
  const edited = rows[index];
  const hashes = new Map<string, Buffer>();
  let prev: Buffer = rows[index - 1].chain_hash;
  for (const r of rows.slice(index)) {
    // the content the service hashes (its own row mapping), with the edited record's new actor
    const content = chainContentOfRow({ ...r, actor_id: r.id === edited.id ? 'forger' : r.actor_id } as ActivityLogRow);
    const hash = chainHash(prev, contentDigest(content), BigInt(r.seq), BigInt(r.micros));
    await behindTheBack(t, `UPDATE activity_log SET actor_id = $2, chain_hash = $3 WHERE id = $1`, [r.id, content.actorId, hash]);
    hashes.set(r.seq, hash);
    prev = hash;
  }
  await behindTheBack(t, `UPDATE activity_chain_heads SET hash = $2 WHERE company_id = $1`, [companyId, prev]);
  return hashes;
}

/** The company's export as text. */
async function exportText(t: TestApp, companyId: string): Promise<string> {
  const res = await t.http
    .get(`/api/companies/${companyId}/activity/export`)
    .buffer(true)
    .parse((r, cb) => {
      let data = '';
      r.setEncoding('utf8');
      r.on('data', (d: string) => (data += d));
      r.on('end', () => cb(null, data));
    });
  expect(res.status).toBe(200);
  return res.body as string;
}

async function chainRows(t: TestApp, companyId: string): Promise<Array<{ id: string; chain_seq: string }>> {
  return t.dataSource.query(`SELECT id, chain_seq::text AS chain_seq FROM activity_log a WHERE company_id = $1 ORDER BY a.chain_seq`, [
    companyId,
  ]);
}

describe('activity chain', () => {
  let t: TestApp;
  let tmp: string;
  beforeAll(async () => {
    t = await createTestApp();
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'activity-chain-'));
  });
  afterAll(async () => {
    await t.close();
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  describe('GET /api/companies/:companyId/activity/verify', () => {
    it('is ok on a busy company (parallel writers) and on its neighbour written at the same time', async () => {
      const [a, b] = await Promise.all([createCompany(t), createCompany(t)]);
      await Promise.all([busy(t, a.id), busy(t, b.id)]);
      for (const c of [a, b]) {
        const rows = await chainRows(t, c.id);
        // every record chained, numbered 1..n without gaps
        expect(rows.map((r) => r.chain_seq)).toEqual(rows.map((_, i) => String(i + 1)));
        const res = await t.http.get(`/api/companies/${c.id}/activity/verify`).expect(200);
        expect(res.body).toEqual({ ok: true, checked: rows.length, firstBrokenId: null, reason: null, seq: null, anchorsChecked: 0 });
        expect(rows.length).toBeGreaterThan(24 * 4);
      }
    });

    it('reports the first record changed behind the service (triggers off)', async () => {
      const c = await createCompany(t);
      await busy(t, c.id, 6);
      const rows = await chainRows(t, c.id);
      const victim = rows[Math.floor(rows.length / 2)];
      const later = rows[rows.length - 2];
      await behindTheBack(t, `UPDATE activity_log SET details = '{"forged": true}' WHERE id = $1`, [later.id]);
      await behindTheBack(t, `UPDATE activity_log SET actor_id = 'someone-else' WHERE id = $1`, [victim.id]);
      const res = await t.http.get(`/api/companies/${c.id}/activity/verify`).expect(200);
      expect(res.body).toMatchObject({ ok: false, firstBrokenId: victim.id, reason: 'hash_mismatch', seq: victim.chain_seq });
      expect(res.body.checked).toBe(Number(victim.chain_seq) - 1);
    });

    it('reports a changed creation time', async () => {
      const c = await createCompany(t);
      await busy(t, c.id, 3);
      const [, second] = await chainRows(t, c.id);
      await behindTheBack(t, `UPDATE activity_log SET created_at = created_at - interval '1 day' WHERE id = $1`, [second.id]);
      const res = await t.http.get(`/api/companies/${c.id}/activity/verify`).expect(200);
      expect(res.body).toMatchObject({ ok: false, firstBrokenId: second.id, reason: 'hash_mismatch' });
    });

    it('reports a deleted record by its id, in the middle and at the end of the chain', async () => {
      const c = await createCompany(t);
      await busy(t, c.id, 4);
      const rows = await chainRows(t, c.id);
      const victim = rows[3];
      await behindTheBack(t, `DELETE FROM activity_log WHERE id = $1`, [victim.id]);
      let res = await t.http.get(`/api/companies/${c.id}/activity/verify`).expect(200);
      expect(res.body).toMatchObject({ ok: false, firstBrokenId: victim.id, reason: 'missing_record', seq: '4', checked: 3 });

      const d = await createCompany(t);
      await busy(t, d.id, 2);
      const tail = (await chainRows(t, d.id)).pop()!;
      await behindTheBack(t, `DELETE FROM activity_log WHERE id = $1`, [tail.id]);
      res = await t.http.get(`/api/companies/${d.id}/activity/verify`).expect(200);
      expect(res.body).toMatchObject({ ok: false, firstBrokenId: tail.id, reason: 'missing_record', seq: tail.chain_seq });
    });

    it('a chain recomputed after an edit still fails against the signed anchor', async () => {
      const c = await createCompany(t);
      await busy(t, c.id, 3);
      const anchor = await t.http.post(`/api/companies/${c.id}/activity/anchors`).expect(201);
      // the forger edits record 2 and rewrites every hash after it, and the head, consistently
      await rewriteChain(t, c.id, 1);
      const res = await t.http.get(`/api/companies/${c.id}/activity/verify`).expect(200);
      expect(res.body).toMatchObject({ ok: false, reason: 'anchor_mismatch', seq: anchor.body.seq });
    });

    it('is board-only: an agent key gets 403, another company 403, an unknown company 404', async () => {
      const c = await createCompany(t);
      const { token } = await createAgentWithKey(t, c.id);
      for (const p of ['verify', 'export']) {
        const res = await t.http.get(`/api/companies/${c.id}/activity/${p}`).set(bearer(token)).expect(403);
        expect(res.body.code).toBeDefined();
      }
      await t.http.post(`/api/companies/${c.id}/activity/anchors`).set(bearer(token)).expect(403);
      const other = await createCompany(t);
      await t.http.get(`/api/companies/${other.id}/activity/verify`).set(bearer(token)).expect(403);
      await t.http.get(`/api/companies/${randomUUID()}/activity/verify`).expect(404);
    });
  });

  describe('GET /api/companies/:companyId/activity/export', () => {
    it('exports JSON lines that the standalone script verifies offline with the pinned key, and a tampered copy it rejects', async () => {
      const c = await createCompany(t);
      await busy(t, c.id, 5);
      const anchor = await t.http.post(`/api/companies/${c.id}/activity/anchors`).expect(201);
      await busy(t, c.id, 2);
      const res = await t.http
        .get(`/api/companies/${c.id}/activity/export`)
        .buffer(true)
        .parse((r, cb) => {
          let data = '';
          r.setEncoding('utf8');
          r.on('data', (d: string) => (data += d));
          r.on('end', () => cb(null, data));
        });
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toMatch(/application\/x-ndjson/);
      const text = res.body as string;
      const lines = text
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l));
      expect(lines[0]).toMatchObject({ type: 'header', companyId: c.id, publicKeys: [{ publicKey: anchor.body.publicKey }] });
      expect(lines.filter((l) => l.type === 'anchor')).toHaveLength(1);
      const records = lines.filter((l) => l.type === 'record');
      expect(records.length).toBe(Number(lines[0].headSeq));
      expect(lines[lines.length - 1]).toEqual({ type: 'end', records: records.length });

      const file = path.join(tmp, 'chain.jsonl');
      fs.writeFileSync(file, text);
      const ok = await run(process.execPath, [SCRIPT, file, '--public-key', anchor.body.publicKey]);
      expect(JSON.parse(ok.stdout)).toMatchObject({ ok: true, checked: records.length, anchorsChecked: 1 });

      // one record's details edited in the copy
      const victim = records[4];
      const tampered = text.replace(JSON.stringify(victim), JSON.stringify({ ...victim, details: { ...victim.details, extra: 1 } }));
      fs.writeFileSync(file, tampered);
      const bad = await run(process.execPath, [SCRIPT, file, '--public-key', anchor.body.publicKey]).catch((e) => e);
      expect(bad.code).toBe(1);
      expect(JSON.parse(bad.stdout)).toMatchObject({ ok: false, firstBrokenId: victim.id, reason: 'hash_mismatch' });

      // a record dropped from the copy
      fs.writeFileSync(file, text.replace(JSON.stringify(victim) + '\n', ''));
      const gap = await run(process.execPath, [SCRIPT, file, '--public-key', anchor.body.publicKey]).catch((e) => e);
      expect(JSON.parse(gap.stdout)).toMatchObject({ ok: false, firstBrokenId: victim.id, reason: 'missing_record' });

      // anchors signed by another key than the pinned one are refused
      fs.writeFileSync(file, text);
      const { publicKey } = await import('node:crypto').then((m) => m.generateKeyPairSync('ed25519'));
      const other = publicKey.export({ format: 'der', type: 'spki' }).toString('base64');
      const untrusted = await run(process.execPath, [SCRIPT, file, '--public-key', other]).catch((e) => e);
      expect(JSON.parse(untrusted.stdout)).toMatchObject({ ok: false, reason: 'anchor_untrusted_key' });
    });
  });

  describe('POST /api/companies/:companyId/activity/anchors', () => {
    it('signs the head; verify checks the anchor', async () => {
      const c = await createCompany(t);
      await busy(t, c.id, 2);
      const head = (await chainRows(t, c.id)).pop()!;
      const res = await t.http.post(`/api/companies/${c.id}/activity/anchors`).expect(201);
      expect(res.body).toMatchObject({ companyId: c.id, seq: head.chain_seq, keyId: expect.stringMatching(/^[0-9a-f]{16}$/) });
      const v = await t.http.get(`/api/companies/${c.id}/activity/verify`).expect(200);
      expect(v.body).toMatchObject({ ok: true, anchorsChecked: 1 });
    });

    it('the scheduled round runs once across instances', async () => {
      const second = await createTestApp({ databaseUrl: t.databaseUrl });
      try {
        const c = await createCompany(t);
        await busy(t, c.id, 2);
        await t.dataSource.query(`UPDATE activity_anchor_schedule SET next_due_at = NULL`);
        await Promise.all([t.app.get(ActivityAnchorsScheduler).tick(), second.app.get(ActivityAnchorsScheduler).tick()]);
        const anchors = await t.dataSource.query(`SELECT seq::text AS seq FROM activity_chain_anchors WHERE company_id = $1`, [c.id]);
        expect(anchors).toEqual([{ seq: (await chainRows(t, c.id)).pop()!.chain_seq }]);
        // not due again before the interval: another round makes nothing
        await t.app.get(ActivityAnchorsScheduler).tick();
        expect(await t.dataSource.query(`SELECT 1 FROM activity_chain_anchors WHERE company_id = $1`, [c.id])).toHaveLength(1);
      } finally {
        await second.close();
      }
    });
  });
});

describe('activity chain: nothing is hidden from verify and the offline check by writes to the database (issue 41)', () => {
  let t: TestApp;
  let tmp: string;
  let pinned: string;
  beforeAll(async () => {
    t = await createTestApp();
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'activity-chain-db-'));
    pinned = (t.app.get(AuditSigner) as AuditSigner).publicKey;
  });
  afterAll(async () => {
    await t.close();
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  const verify = async (companyId: string) => (await t.http.get(`/api/companies/${companyId}/activity/verify`).expect(200)).body;
  /** The offline script on a fresh export, with the instance's key pinned. */
  async function offline(companyId: string): Promise<Record<string, unknown>> {
    const file = path.join(tmp, `${companyId}.jsonl`);
    fs.writeFileSync(file, await exportText(t, companyId));
    const r = await run(process.execPath, [SCRIPT, file, '--public-key', pinned]).catch((e) => e);
    return JSON.parse(r.stdout);
  }
  /** An anchor row signed again by someone else's key (the forger's), over `hash`. */
  async function resign(companyId: string, anchorId: string, hash: Buffer): Promise<void> {
    const [a] = await t.dataSource.query(`SELECT seq::text AS seq, anchored_at FROM activity_chain_anchors WHERE id = $1`, [anchorId]);
    const { privateKey, publicKey } = generateKeyPairSync('ed25519');
    const spki = publicKey.export({ format: 'der', type: 'spki' }).toString('base64');
    const signature = sign(null, anchorMessage({ companyId, seq: a.seq, hash, anchoredAt: a.anchored_at }), privateKey);
    await behindTheBack(t, `UPDATE activity_chain_anchors SET hash = $2, public_key = $3, key_id = $4, signature = $5 WHERE id = $1`, [
      anchorId,
      hash,
      spki,
      keyIdOf(spki),
      signature,
    ]);
  }

  it('an anchor re-signed with another key: ok false, anchor_untrusted_key (route and offline)', async () => {
    const c = await createCompany(t);
    await busy(t, c.id, 3);
    const anchor = (await t.http.post(`/api/companies/${c.id}/activity/anchors`).expect(201)).body;
    await resign(c.id, anchor.id, Buffer.from(anchor.hash, 'hex'));
    const expected = { ok: false, reason: 'anchor_untrusted_key', seq: anchor.seq };
    expect(await verify(c.id)).toMatchObject(expected);
    expect(await offline(c.id)).toMatchObject(expected);
  });

  it('a rewritten chain whose anchor is re-signed, or whose anchors are deleted: ok false at the anchored position (route and offline)', async () => {
    for (const cover of ['resign', 'delete'] as const) {
      const c = await createCompany(t);
      await busy(t, c.id, 3);
      const anchor = (await t.http.post(`/api/companies/${c.id}/activity/anchors`).expect(201)).body;
      const hashes = await rewriteChain(t, c.id, 1);
      if (cover === 'resign') await resign(c.id, anchor.id, hashes.get(anchor.seq)!);
      else await behindTheBack(t, `DELETE FROM activity_chain_anchors WHERE company_id = $1`, [c.id]);
      // re-signed: the forger's key is not trusted; deleted: the instance's own record of its anchor
      const expected = { ok: false, reason: cover === 'resign' ? 'anchor_untrusted_key' : 'anchor_mismatch', seq: anchor.seq };
      expect(await verify(c.id)).toMatchObject(expected);
      expect(await offline(c.id)).toMatchObject(expected);
    }
  });

  it('deleted anchors of an untouched chain: ok false, anchor_missing (route and offline)', async () => {
    const c = await createCompany(t);
    await busy(t, c.id, 2);
    await t.http.post(`/api/companies/${c.id}/activity/anchors`).expect(201);
    await busy(t, c.id, 1);
    const newest = (await t.http.post(`/api/companies/${c.id}/activity/anchors`).expect(201)).body;
    await behindTheBack(t, `DELETE FROM activity_chain_anchors WHERE company_id = $1`, [c.id]);
    const expected = { ok: false, reason: 'anchor_missing', seq: newest.seq };
    expect(await verify(c.id)).toMatchObject(expected);
    expect(await offline(c.id)).toMatchObject(expected);
  });

  it('a row inserted past the head: ok false, record_beyond_head (route and offline)', async () => {
    const c = await createCompany(t);
    await busy(t, c.id, 2);
    const last = (await chainRows(t, c.id)).pop()!;
    const id = randomUUID();
    await behindTheBack(
      t,
      `INSERT INTO activity_log (id, company_id, actor_type, actor_id, action, entity_type, entity_id, details, created_at, chain_seq, chain_hash, chain_prev_id)
       SELECT $2, company_id, 'user', 'board', 'company.deleted', 'company', company_id::text, NULL, now() + interval '1 day', 999, chain_hash, id
         FROM activity_log WHERE id = $1`,
      [last.id, id],
    );
    const expected = { ok: false, reason: 'record_beyond_head', firstBrokenId: id, seq: '999' };
    expect(await verify(c.id)).toMatchObject(expected);
    expect(await offline(c.id)).toMatchObject(expected);
  });

  it('an untouched chain with anchors verifies on the route and offline', async () => {
    const c = await createCompany(t);
    await busy(t, c.id, 2);
    await t.http.post(`/api/companies/${c.id}/activity/anchors`).expect(201);
    await busy(t, c.id, 1);
    expect(await verify(c.id)).toMatchObject({ ok: true, anchorsChecked: 1 });
    expect(await offline(c.id)).toMatchObject({ ok: true, anchorsChecked: 1 });
  });
});

describe('activity chain: migration', () => {
  it('chains the records written before it, and appends continue the chain', async () => {
    const t = await createTestApp({ databaseUrl: await createTestDatabase() });
    try {
      const [a, b] = await Promise.all([createCompany(t), createCompany(t)]);
      await Promise.all([busy(t, a.id, 3), busy(t, b.id, 3)]);
      // back to the records as they were before the chain, then migrate them
      const c = await sqlClient(t.databaseUrl);
      try {
        const q = { query: (sql: string, params?: unknown[]) => c.query(sql, params).then((r) => r.rows) } as unknown as QueryRunner;
        const migration = new ActivityChain1763830000000();
        await migration.down(q);
        // shuffle one company's times: the migration chains in time order, not in the order of insertion
        await c.query(`SET session_replication_role = replica`);
        await c.query(`UPDATE activity_log SET created_at = created_at - interval '1 hour' * random() WHERE company_id = $1`, [b.id]);
        await c.query(`SET session_replication_role = DEFAULT`);
        await migration.up(q);
      } finally {
        await c.end();
      }
      for (const co of [a, b]) {
        const count = (await t.dataSource.query(`SELECT count(*)::int AS n FROM activity_log WHERE company_id = $1`, [co.id]))[0].n;
        const res = await t.http.get(`/api/companies/${co.id}/activity/verify`).expect(200);
        expect(res.body).toMatchObject({ ok: true, checked: count });
      }
      await busy(t, a.id, 2);
      expect((await t.http.get(`/api/companies/${a.id}/activity/verify`).expect(200)).body.ok).toBe(true);
    } finally {
      await t.close();
    }
  });
});

describe('activity chain: authenticated mode', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ env: { SERVICE_DEPLOYMENT_MODE: 'authenticated' } });
  });
  afterAll(() => t.close());

  it('refuses callers without credentials with 401', async () => {
    await t.http.get(`/api/companies/${randomUUID()}/activity/verify`).expect(401);
    await t.http.get(`/api/companies/${randomUUID()}/activity/export`).expect(401);
  });
});
