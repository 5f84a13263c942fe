const { Client } = require('pg');
const { issueColumns } = require('./dist/src/modules/issues/issue.types');
const { issueSetsSql } = require('./dist/src/modules/issues/issue-store.service');
(async () => { const c = new Client({ connectionString: require('fs').readFileSync('/tmp/issues-db-url','utf8').trim() }); await c.connect();
const C = require('/tmp/seed.json').companyId;
const cols = `${issueColumns('i')}, i.priority_rank, i.created_at::text AS cursor_at`;
const inner = `SELECT ${cols} FROM issues i WHERE i.company_id = $1 AND i.hidden_at IS NULL AND i.origin_kind <> 'routine_execution' ORDER BY i.priority_rank, i.created_at DESC, i.id DESC LIMIT $2`;
const variants = {
  full: `SELECT page.*, ${issueSetsSql('page')} FROM (${inner}) page ORDER BY page.priority_rank, page.created_at DESC, page.id DESC`,
  nosets: `SELECT page.* FROM (${inner}) page ORDER BY page.priority_rank, page.created_at DESC, page.id DESC`,
};
for (const [k, sql] of Object.entries(variants)) {
  for (let i = 0; i < 200; i++) await c.query(sql, [C, 50]);
  let t = process.hrtime.bigint(); for (let i = 0; i < 500; i++) await c.query(sql, [C, 50]); console.log(k, Number(process.hrtime.bigint() - t) / 500 / 1000, 'us/query (client wall)');
  const r = await c.query('EXPLAIN (ANALYZE, TIMING OFF, SUMMARY ON) ' + sql, [C, 50]); console.log(r.rows.filter(x=>/Execution|Planning/.test(x['QUERY PLAN'])).map(x=>x['QUERY PLAN']).join(' | '));
}
await c.end(); })();
