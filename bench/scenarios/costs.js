'use strict';
const { Client } = require('pg');
const { api, databaseUrl, load } = require('../lib');

const SEED_EVENTS = Number(process.env.BENCH_COST_EVENTS ?? 1_000_000);

/** Agents are inserted directly: the agents API is another module's. */
async function insertAgents(db, companyId, n) {
  const { rows } = await db.query(
    `INSERT INTO agents (company_id, name, url_key, adapter_type)
     SELECT $1, 'bench-' || i, 'bench-' || i, 'process' FROM generate_series(1, $2) i RETURNING id`,
    [companyId, n],
  );
  return rows.map((r) => r.id);
}

/**
 * POST cost-events at 10 connections with company, agent and project policies active (amounts high
 * enough that nothing stops), then summary and by-agent over SEED_EVENTS events seeded in SQL.
 */
module.exports = async function costs(baseUrl, svc) {
  const db = new Client({ connectionString: databaseUrl(svc) });
  await db.connect();
  try {
    const hot = await api(baseUrl, 'POST', '/api/companies', { name: 'Bench Costs', budgetMonthlyCents: 2_000_000_000 });
    const agents = await insertAgents(db, hot.id, 10);
    for (const id of agents) await api(baseUrl, 'PATCH', `/api/agents/${id}/budgets`, { budgetMonthlyCents: 1_000_000_000 });
    const {
      rows: [project],
    } = await db.query(`INSERT INTO projects (company_id, name, url_key) VALUES ($1, 'bench', 'bench') RETURNING id`, [hot.id]);
    await api(baseUrl, 'POST', `/api/companies/${hot.id}/budgets/policies`, {
      scopeType: 'project',
      scopeId: project.id,
      amount: 2_000_000_000,
    });
    let n = 0;
    const body = () => {
      n++;
      return JSON.stringify({
        agentId: agents[n % agents.length],
        provider: n % 3 ? 'prov-a' : 'prov-b',
        model: 'model-x',
        costCents: 3,
        inputTokens: 1200,
        outputTokens: 300,
        occurredAt: new Date().toISOString(),
        ...(n % 2 ? { projectId: project.id } : {}),
      });
    };
    const rows = [
      await load('POST cost-events (policies active)', {
        url: `${baseUrl}/api/companies/${hot.id}/cost-events`,
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        requests: [{ setupRequest: (req) => ({ ...req, body: body() }) }],
      }),
    ];

    if (SEED_EVENTS === 0) return rows; // BENCH_COST_EVENTS=0: the POST row alone (profiling)
    const big = await api(baseUrl, 'POST', '/api/companies', { name: 'Bench Big', budgetMonthlyCents: 100_000 });
    const bigAgents = await insertAgents(db, big.id, 100);
    const started = Date.now();
    // 1M events over the last 60 days, 100 agents, 3 providers; then their running totals, as the API would have kept them
    await db.query(
      `INSERT INTO cost_events (company_id, agent_id, provider, model, biller, cost_cents, input_tokens, output_tokens, occurred_at,
                                reported_by_actor_type, reported_by_actor_id)
       SELECT $1, ($2::uuid[])[1 + i % 100], 'prov-' || (i % 3), 'model-' || (i % 5), 'prov-' || (i % 3), i % 50, 1000 + i % 700, i % 300,
              now() - (i::float8 * 5184000 / $3) * interval '1 second', 'user', 'bench'
         FROM generate_series(1, $3) i`,
      [big.id, bigAgents, SEED_EVENTS],
    );
    await db.query(
      `INSERT INTO cost_usage (company_id, scope_type, scope_id, window_kind, window_start, billed_cents, input_tokens, cached_input_tokens,
                               output_tokens, event_count, unpriced_event_count)
       SELECT $1, s.scope_type, s.scope_id, w.kind, w.start, sum(e.cost_cents), sum(e.input_tokens), 0, sum(e.output_tokens), count(*), 0
         FROM cost_events e
        CROSS JOIN LATERAL (VALUES ('company', e.company_id), ('agent', e.agent_id)) s(scope_type, scope_id)
        CROSS JOIN LATERAL (VALUES ('lifetime', 'epoch'::timestamptz), ('calendar_month_utc', date_trunc('month', e.occurred_at, 'UTC')),
                                   ('utc_day', date_trunc('day', e.occurred_at, 'UTC'))) w(kind, start)
        WHERE e.company_id = $1
        GROUP BY 2, 3, 4, 5`,
      [big.id],
    );
    // what autovacuum would do soon after: statistics, and the visibility map for index-only scans
    await db.query('VACUUM ANALYZE cost_events');
    await db.query('VACUUM ANALYZE cost_usage');
    console.log(`seeded ${SEED_EVENTS} cost events in ${Math.round((Date.now() - started) / 1000)} s`);
    const month = new Date(Date.now() - 30 * 86400e3).toISOString();
    const base = `${baseUrl}/api/companies/${big.id}/costs`;
    rows.push(
      await load('GET costs/summary (1M events, all time)', { url: `${base}/summary` }),
      await load('GET costs/summary (1M events, last 30 days)', { url: `${base}/summary?from=${encodeURIComponent(month)}` }),
      await load('GET costs/by-agent (1M events, all time)', { url: `${base}/by-agent` }),
      await load('GET costs/by-agent (1M events, last 30 days)', { url: `${base}/by-agent?from=${encodeURIComponent(month)}` }),
      await load('GET costs/window-spend (1M events)', { url: `${base}/window-spend` }),
    );
    return rows;
  } finally {
    await db.end();
  }
};
