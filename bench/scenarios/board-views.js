'use strict';
// The board UI's dashboard and live-run views at 10 connections, on a company with 100,000
// heartbeat runs (spread over 90 days: every status, error codes) among 1,000,000 runs in the
// database (BENCH_COMPANY_RUNS / BENCH_OTHER_RUNS), 20 agents, 2,000 issues and 50 live runs.
// Rows are inserted with SQL (generate_series), then VACUUM ANALYZE as autovacuum would.
// Targets: dashboard and live-runs p99 < 50 ms. The dashboard counts today's runs on every read
// and reuses the 13 closed days' counts for a minute: its first read is timed apart.
const { Client } = require('pg');
const { api, databaseUrl, load } = require('../lib');

const COMPANY_RUNS = Number(process.env.BENCH_COMPANY_RUNS ?? 100000);
const OTHER_RUNS = Number(process.env.BENCH_OTHER_RUNS ?? 900000);
const LIVE_RUNS = 50;

async function seedRuns(db, companyId, agentIds, issueIds, n) {
  // status mix of a busy company: mostly succeeded, some failed / timed out / cancelled
  await db.query(
    `INSERT INTO heartbeat_runs (company_id, agent_id, status, invocation_source, trigger_detail, adapter_type, issue_id,
                                 context_snapshot, started_at, finished_at, error_code, created_at, updated_at)
     SELECT $1, ($2::uuid[])[1 + g % array_length($2::uuid[], 1)],
            (ARRAY['succeeded','succeeded','succeeded','succeeded','succeeded','succeeded','failed','timed_out','cancelled','succeeded'])[1 + g % 10],
            (ARRAY['timer','assignment','on_demand','automation'])[1 + g % 4], 'system', 'process',
            CASE WHEN g % 3 = 0 THEN ($3::uuid[])[1 + g % array_length($3::uuid[], 1)] END,
            '{}'::jsonb, ts, ts + interval '30 seconds',
            CASE g % 10 WHEN 6 THEN 'adapter_exit_nonzero' WHEN 7 THEN 'timeout' END, ts, ts
       FROM generate_series(1, $4::int) AS g, LATERAL (SELECT now() - (g::float / $4 * interval '90 days') AS ts) t`,
    [companyId, agentIds, issueIds, n],
  );
}

module.exports = async function boardViews(baseUrl, svc) {
  const db = new Client({ connectionString: databaseUrl(svc) });
  await db.connect();
  try {
    const seedCompany = async (name, runs) => {
      const co = await api(baseUrl, 'POST', '/api/companies', { name });
      const agents = [];
      for (let i = 0; i < 20; i++) {
        agents.push(
          (
            await db.query(
              `INSERT INTO agents (company_id, name, url_key, adapter_type, adapter_config, status) VALUES ($1, $2, $2, 'process', '{"command":"true"}', $3) RETURNING id`,
              [co.id, `bench-agent-${i}`, ['idle', 'running', 'paused', 'error'][i % 4]],
            )
          ).rows[0].id,
        );
      }
      const issues = (
        await db.query(
          `INSERT INTO issues (company_id, issue_number, identifier, title, status, priority)
         SELECT $1, g, $2 || '-' || g, 'Bench issue ' || g, (ARRAY['backlog','todo','in_progress','blocked','done','cancelled'])[1 + g % 6], 'medium'
           FROM generate_series(1, 2000) g RETURNING id`,
          [co.id, co.issuePrefix],
        )
      ).rows.map((r) => r.id);
      await db.query(`UPDATE companies SET issue_counter = 2001 WHERE id = $1`, [co.id]);
      const t0 = Date.now();
      await seedRuns(db, co.id, agents, issues, runs);
      console.log(`  seeded ${runs} runs for ${name} in ${Date.now() - t0} ms`);
      return { co, agents, issues };
    };
    if (OTHER_RUNS > 0) await seedCompany(`Board Views Other ${Date.now()}`, OTHER_RUNS);
    const { co, agents, issues } = await seedCompany(`Board Views ${Date.now()}`, COMPANY_RUNS);
    // live runs: running without a lease or owner, so neither the dispatcher nor the reaper touches them
    await db.query(
      `INSERT INTO heartbeat_runs (company_id, agent_id, status, invocation_source, adapter_type, issue_id, started_at, last_output_at, log_bytes)
       SELECT $1, ($2::uuid[])[1 + g % 20], 'running', 'assignment', 'process', ($3::uuid[])[1 + g % 10], now(), now(), 100
         FROM generate_series(1, $4::int) g`,
      [co.id, agents, issues, LIVE_RUNS],
    );
    const t0 = Date.now();
    await db.query('VACUUM ANALYZE heartbeat_runs');
    await db.query('VACUUM ANALYZE issues');
    await db.query('VACUUM ANALYZE agents');
    console.log(`  vacuum analyze in ${Date.now() - t0} ms`);
    const issue = (await db.query(`SELECT identifier FROM issues WHERE id = $1`, [issues[1]])).rows[0].identifier;
    if (process.env.BENCH_EXPLAIN) {
      const explain = async (sql, params) =>
        console.log((await db.query(`EXPLAIN (ANALYZE, BUFFERS) ${sql}`, params)).rows.map((r) => r['QUERY PLAN']).join('\n'));
      const day = new Date();
      day.setUTCHours(0, 0, 0, 0);
      await explain(
        `SELECT to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day, status, error_code, count(*)::int AS n FROM heartbeat_runs WHERE company_id = $1 AND created_at >= $2 AND created_at < $3 GROUP BY 1, 2, 3`,
        [co.id, day, new Date(day.getTime() + 86400000)],
      );
      await explain(
        `SELECT r.id, a.name FROM heartbeat_runs r JOIN agents a ON a.id = r.agent_id WHERE r.company_id = $1 AND r.status IN ('queued', 'running') ORDER BY r.created_at DESC, r.id DESC LIMIT 200`,
        [co.id],
      );
      await explain(`SELECT r.* FROM heartbeat_runs r WHERE r.company_id = $1 ORDER BY r.created_at DESC, r.id DESC LIMIT 51`, [co.id]);
      await explain(`SELECT status, count(*)::int AS n FROM issues WHERE company_id = $1 AND hidden_at IS NULL GROUP BY status`, [co.id]);
      return [];
    }
    const k = `${Math.round(COMPANY_RUNS / 1000)}k`;
    // the first dashboard read counts the 13 closed days too (then reused for a minute): timed alone
    const cold = [];
    for (let i = 0; i < 3; i++) {
      const t1 = process.hrtime.bigint();
      const r = await fetch(`${baseUrl}/api/companies/${co.id}/dashboard`);
      await r.text();
      cold.push(Number(process.hrtime.bigint() - t1) / 1e6);
    }
    // service time without queueing: 300 sequential requests on one connection
    const sequential = async (name, url) => {
      const times = [];
      for (let i = 0; i < 300; i++) {
        const t1 = process.hrtime.bigint();
        const r = await fetch(url);
        await r.text();
        times.push(Number(process.hrtime.bigint() - t1) / 1e6);
      }
      times.sort((a, b) => a - b);
      return { name, reqPerSec: '-', p50Ms: times[150].toFixed(1), p99Ms: times[296].toFixed(1), errors: 0, non2xx: 0 };
    };
    const seq = [
      await sequential('GET dashboard, 1 connection, sequential', `${baseUrl}/api/companies/${co.id}/dashboard`),
      await sequential('GET live-runs, 1 connection, sequential', `${baseUrl}/api/companies/${co.id}/live-runs`),
    ];
    const loadavg = require('node:os')
      .loadavg()
      .map((x) => x.toFixed(1))
      .join(' ');
    return [
      ...seq,
      { name: `machine load average before the load: ${loadavg}`, reqPerSec: '-', p50Ms: '-', p99Ms: '-', errors: 0, non2xx: 0 },
      {
        name: `GET dashboard: first read, then 2 warm (1 connection)`,
        reqPerSec: '-',
        p50Ms: cold.map((x) => x.toFixed(1)).join(' / '),
        p99Ms: '-',
        errors: 0,
        non2xx: 0,
      },
      await load(`GET dashboard (${k} runs in company)`, { url: `${baseUrl}/api/companies/${co.id}/dashboard` }),
      await load(`GET live-runs (company, ${LIVE_RUNS} live)`, { url: `${baseUrl}/api/companies/${co.id}/live-runs` }),
      await load(`GET issues/:id/live-runs`, { url: `${baseUrl}/api/issues/${issue}/live-runs` }),
      await load(`GET heartbeat-runs (limit 50, first page)`, { url: `${baseUrl}/api/companies/${co.id}/heartbeat-runs?limit=50` }),
      await load(`GET heartbeat-runs?status=failed`, { url: `${baseUrl}/api/companies/${co.id}/heartbeat-runs?status=failed&limit=50` }),
      await load(`GET sidebar-badges`, { url: `${baseUrl}/api/companies/${co.id}/sidebar-badges` }),
    ];
  } finally {
    await db.end();
  }
};
