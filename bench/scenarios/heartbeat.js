'use strict';
// Heartbeat engine benchmarks on their own pair of service instances sharing one database
// (agents are inserted with SQL, so the scenario needs nothing but the engine):
//  1. wake-to-process-start latency of a `process` agent running `true` (server timestamps:
//     run createdAt -> startedAt), 100 sequential wakes; target p99 < 250 ms;
//  2. runs completed per second with 50 agents woken at once (4 rounds); target >= 50 runs/s;
//  3. two instances on one database: 1,000 wakeups spread over both, zero duplicated runs.
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { Client } = require('pg');
const { databaseUrl, startService } = require('../lib');

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const pct = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] : 0;
};
const post = async (base, p, body) => {
  const res = await fetch(base + p, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const json = await res.json();
  if (res.status >= 300) throw new Error(`POST ${p}: ${res.status} ${JSON.stringify(json)}`);
  return json;
};

async function untilEnded(db, ids) {
  for (;;) {
    const { rows } = await db.query(
      `SELECT count(*)::int AS n FROM heartbeat_runs WHERE id = ANY($1) AND status NOT IN ('queued','running')`,
      [ids],
    );
    if (rows[0].n === ids.length) return;
    await sleep(10);
  }
}

module.exports = async function heartbeat() {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-bench-hb-'));
  const one = await startService({ SERVICE_DATA_DIR: dataDir, SERVICE_INSTANCE_ID: 'bench-one' });
  // the embedded cluster's URL with its generated password (the second instance shares it)
  const url = databaseUrl({ dataDir });
  const db = new Client({ connectionString: url });
  let two;
  try {
    await db.connect();
    const co = await post(one.baseUrl, '/api/companies', { name: `Heartbeat Bench ${Date.now()}` });
    const agent = async (name) =>
      (
        await db.query(
          `INSERT INTO agents (company_id, name, url_key, adapter_type, adapter_config) VALUES ($1, $2, $2, 'process', '{"command":"true"}') RETURNING id`,
          [co.id, `${name}-${Date.now()}-${Math.random().toString(36).slice(2, 6)}`],
        )
      ).rows[0].id;
    const wake = (base, id, payload = {}) =>
      post(base, `/api/agents/${id}/wakeup`, { source: 'on_demand', triggerDetail: 'manual', reason: 'bench', payload });

    const latencyAgent = await agent('latency');
    const lat = [];
    for (let i = 0; i < 100; i++) {
      const run = await wake(one.baseUrl, latencyAgent);
      await untilEnded(db, [run.id]);
      const { rows } = await db.query('SELECT started_at, created_at FROM heartbeat_runs WHERE id = $1', [run.id]);
      lat.push(rows[0].started_at - rows[0].created_at);
    }

    const burst = [];
    for (let i = 0; i < 50; i++) burst.push(await agent(`burst-${i}`));
    let t0 = Date.now();
    let completed = 0;
    for (let round = 0; round < 4; round++) {
      const ids = (await Promise.all(burst.map((a) => wake(one.baseUrl, a)))).map((r) => r.id);
      await untilEnded(db, ids);
      completed += ids.length;
    }
    const runsPerSec = Math.round(completed / ((Date.now() - t0) / 1000));

    two = await startService({ DATABASE_URL: url, SERVICE_INSTANCE_ID: 'bench-two' });
    const bases = [one.baseUrl, two.baseUrl];
    const ids = [];
    t0 = Date.now();
    for (let batch = 0; batch < 20; batch++) {
      // 50 wakes per batch, for distinct issues so that none coalesces: 1,000 runs
      const replies = await Promise.all(
        burst.map((a, i) => wake(bases[(batch + i) % 2], a, { issueId: `00000000-0000-4000-8000-${String(batch).padStart(12, '0')}` })),
      );
      ids.push(...replies.map((r) => r.id));
    }
    await untilEnded(db, ids);
    const seconds = (Date.now() - t0) / 1000;
    const { rows: dup } = await db.query(
      `SELECT count(*)::int AS n FROM (SELECT run_id FROM activity_log WHERE action = 'heartbeat.run_started' AND run_id = ANY($1) GROUP BY run_id HAVING count(*) > 1) d`,
      [ids],
    );
    const { rows: by } = await db.query(
      `SELECT claimed_by, count(*)::int AS n FROM heartbeat_runs WHERE id = ANY($1) GROUP BY 1 ORDER BY 1`,
      [ids],
    );
    const { rows: ok } = await db.query(`SELECT count(*)::int AS n FROM heartbeat_runs WHERE id = ANY($1) AND status = 'succeeded'`, [ids]);
    return [
      { name: 'wake -> process start (100 sequential)', reqPerSec: '-', p50Ms: pct(lat, 50), p99Ms: pct(lat, 99), errors: 0, non2xx: 0 },
      { name: 'runs completed/s, 50 agents x 4 rounds', reqPerSec: runsPerSec, p50Ms: '-', p99Ms: '-', errors: 0, non2xx: 0 },
      {
        name: `2 instances, ${new Set(ids).size} runs (${by.map((b) => `${b.claimed_by} ${b.n}`).join(', ')}), duplicated ${dup[0].n}`,
        reqPerSec: Math.round(ids.length / seconds),
        p50Ms: '-',
        p99Ms: '-',
        errors: ids.length - ok[0].n,
        non2xx: 0,
      },
    ];
  } finally {
    await db.end();
    if (two) await two.stop();
    await one.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
};
