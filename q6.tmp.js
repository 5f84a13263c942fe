const { Client } = require('pg');
(async () => { const c = new Client({ connectionString: require('fs').readFileSync('/tmp/issues-db-url','utf8').trim() }); await c.connect();
if (process.argv[2] === 'reset') { await c.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements'); await c.query('SELECT pg_stat_statements_reset()'); console.log('reset'); }
else { const r = await c.query(`SELECT calls, round(total_exec_time::numeric,0) exec_ms, round(total_plan_time::numeric,0) plan_ms, plans, round(((total_exec_time+total_plan_time)/greatest(calls,1))::numeric*1000,0) us_per, left(regexp_replace(query,'\\s+',' ','g'),120) q FROM pg_stat_statements ORDER BY total_exec_time+total_plan_time DESC LIMIT 16`); console.table(r.rows); }
await c.end(); })();
