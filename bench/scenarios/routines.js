'use strict';
// Routines scheduler with 10,000 routines (cron triggers) in one database:
//  1. idle tick: the one statement a tick runs when nothing is due, timed from a client 500 times
//     (round trip included, so an upper bound of its database time); target < 20 ms;
//  2. due firing -> issue: 500 firings (200 due in the same second, 300 spread over 30 s) among
//     the 10,000; latency = issue created_at - the firing's scheduled time; target p99 < 2 s.
// 10 companies of 1,000 routines, 2 agents each; the agents are paused so that no agent process
// runs: this measures the scheduler (issue, execution record, assignment wake, activity).
const { Client } = require('pg');
const { api, databaseUrl } = require('../lib');

const ROUTINES = 10_000;
const COMPANIES = 10;
const AGENTS_PER_COMPANY = 2;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const pct = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] : 0;
};

// the statement RoutinesRepository.dueTriggers sends on every tick
const DUE_SQL = `SELECT t.id, t.company_id, t.routine_id, t.cron_expression, t.timezone, t.next_run_at, r.catch_up_policy
   FROM (SELECT * FROM routine_triggers WHERE next_run_at <= $2 ORDER BY next_run_at LIMIT $1) t
   JOIN routines r ON r.id = t.routine_id
  ORDER BY t.next_run_at`;

module.exports = async function routines(baseUrl, svc) {
  const db = new Client({ connectionString: databaseUrl(svc) });
  await db.connect();
  try {
    // 10 companies x 1,000 routines over 2 agents each, each routine with a daily cron trigger
    // whose next firing is 1 to 24 hours away
    const companies = [];
    for (let c = 0; c < COMPANIES; c++) {
      const co = await api(baseUrl, 'POST', '/api/companies', { name: `Routines Bench ${c} ${Date.now()}` });
      companies.push(co.id);
      const agents = [];
      for (let i = 0; i < AGENTS_PER_COMPANY; i++) {
        const agent = await api(baseUrl, 'POST', `/api/companies/${co.id}/agents`, {
          name: `Scheduled ${i}`,
          adapterType: 'process',
          adapterConfig: { command: 'true' },
        });
        await api(baseUrl, 'POST', `/api/agents/${agent.id}/pause`);
        agents.push(agent.id);
      }
      await db.query(
        `WITH r AS (
           INSERT INTO routines (company_id, title, assignee_agent_id, concurrency_policy)
           SELECT $1, 'Routine ' || g, ($2::uuid[])[1 + g % array_length($2::uuid[], 1)], 'always_create' FROM generate_series(1, $3) g RETURNING id)
         INSERT INTO routine_triggers (company_id, routine_id, kind, cron_expression, timezone, next_run_at)
         SELECT $1, r.id, 'schedule', (row_number() OVER () % 60) || ' ' || (row_number() OVER () % 24) || ' * * *', 'Europe/Berlin',
                now() + interval '1 hour' + random() * interval '23 hours'
           FROM r`,
        [co.id, agents, ROUTINES / COMPANIES],
      );
    }
    await db.query('ANALYZE routine_triggers');
    await db.query('ANALYZE routines');

    // 1. idle tick
    const idle = [];
    for (let i = 0; i < 500; i++) {
      const t0 = process.hrtime.bigint();
      await db.query(DUE_SQL, [200, new Date()]);
      idle.push(Number(process.hrtime.bigint() - t0) / 1e6);
    }
    const plan = await db.query(`EXPLAIN (ANALYZE, FORMAT JSON) ${DUE_SQL.replace('$1', '200').replace('$2', 'now()')}`);
    const execMs = plan.rows[0]['QUERY PLAN'][0]['Execution Time'];

    // 2. due firings among the 10,000
    const { rows: picked } = await db.query(`SELECT id FROM routine_triggers WHERE company_id = ANY($1) ORDER BY random() LIMIT 500`, [
      companies,
    ]);
    const start = Date.now() + 3000;
    const burst = picked.slice(0, 200).map((r) => [r.id, new Date(start)]);
    const spread = picked.slice(200).map((r, i) => [r.id, new Date(start + 1000 + Math.floor((i * 30_000) / 300))]);
    for (const [id, at] of [...burst, ...spread]) await db.query('UPDATE routine_triggers SET next_run_at = $2 WHERE id = $1', [id, at]);
    const planned = [...burst, ...spread];
    const ids = planned.map(([id]) => id);
    const times = planned.map(([, at]) => at.toISOString());
    // only the firings set here (a daily cron of the sample may also come due during the window)
    const OURS = `FROM routine_runs rr JOIN unnest($1::uuid[], $2::timestamptz[]) AS p(id, at) ON rr.trigger_id = p.id AND rr.scheduled_for = p.at`;
    const deadline = start + 45_000;
    while (Date.now() < deadline) {
      const { rows } = await db.query(`SELECT count(*)::int AS n ${OURS}`, [ids, times]);
      if (rows[0].n >= ids.length) break;
      await sleep(500);
    }
    const { rows: lat } = await db.query(
      `SELECT rr.trigger_id, extract(epoch FROM (i.created_at - rr.scheduled_for)) * 1000 AS ms ${OURS} JOIN issues i ON i.id = rr.linked_issue_id`,
      [ids, times],
    );
    const ms = lat.map((r) => Number(r.ms));
    const burstIds = new Set(burst.map(([id]) => id));
    const burstMs = lat.filter((r) => burstIds.has(r.trigger_id)).map((r) => Number(r.ms));
    const spreadMs = lat.filter((r) => !burstIds.has(r.trigger_id)).map((r) => Number(r.ms));
    const { rows: dup } = await db.query(
      `SELECT count(*)::int AS n FROM (SELECT trigger_id, scheduled_for FROM routine_runs WHERE trigger_id = ANY($1) GROUP BY 1, 2 HAVING count(*) > 1) d`,
      [ids],
    );
    return [
      {
        name: `idle tick statement, ${ROUTINES} routines (plan exec ${execMs.toFixed(2)} ms)`,
        reqPerSec: '-',
        p50Ms: +pct(idle, 50).toFixed(2),
        p99Ms: +pct(idle, 99).toFixed(2),
        errors: 0,
        non2xx: 0,
      },
      {
        name: `due firing -> issue, ${ms.length}/${ids.length} fired, duplicated ${dup[0].n}`,
        reqPerSec: '-',
        p50Ms: Math.round(pct(ms, 50)),
        p99Ms: Math.round(pct(ms, 99)),
        errors: ids.length - ms.length,
        non2xx: 0,
      },
      {
        name: `  of which ${burst.length} due in the same second`,
        reqPerSec: '-',
        p50Ms: Math.round(pct(burstMs, 50)),
        p99Ms: Math.round(pct(burstMs, 99)),
        errors: 0,
        non2xx: 0,
      },
      {
        name: `  of which ${spread.length} spread over 30 s`,
        reqPerSec: '-',
        p50Ms: Math.round(pct(spreadMs, 50)),
        p99Ms: Math.round(pct(spreadMs, 99)),
        errors: 0,
        non2xx: 0,
      },
    ];
  } finally {
    await db.end();
  }
};
