const { Client } = require('pg');
const { issueColumns } = require('./dist/src/modules/issues/issue.types');
const { issueSetsSql } = require('./dist/src/modules/issues/issue-store.service');
(async () => { const c = new Client({ connectionString: require('fs').readFileSync('/tmp/issues-db-url','utf8').trim() }); await c.connect();
const C = require('/tmp/seed.json').companyId;
const cols = `${issueColumns('i')}, i.priority_rank, i.created_at::text AS cursor_at`;
const inner = `SELECT ${cols} FROM issues i WHERE i.company_id = $1 AND i.hidden_at IS NULL AND i.origin_kind <> 'routine_execution' ORDER BY i.priority_rank, i.created_at DESC, i.id DESC LIMIT $2`;
const ord = `ORDER BY page.priority_rank, page.created_at DESC, page.id DESC`;
const variants = {
  full: `SELECT page.*, ${issueSetsSql('page')} FROM (${inner}) page ${ord}`,
  grouped: `WITH page AS MATERIALIZED (${inner}),
     lb AS (SELECT il.issue_id, json_agg(json_build_object('id', l.id, 'name', l.name, 'color', l.color) ORDER BY lower(l.name), l.id) AS labels
              FROM issue_labels il JOIN labels l ON l.id = il.label_id WHERE il.issue_id IN (SELECT id FROM page) GROUP BY il.issue_id),
     bl AS (SELECT r.related_issue_id, array_agg(r.issue_id ORDER BY r.created_at, r.issue_id) AS blockers
              FROM issue_relations r WHERE r.related_issue_id IN (SELECT id FROM page) AND r.type = 'blocks' GROUP BY r.related_issue_id)
   SELECT page.*, coalesce(lb.labels, '[]') AS labels, coalesce(bl.blockers, '{}') AS blockers FROM page LEFT JOIN lb ON lb.issue_id = page.id LEFT JOIN bl ON bl.related_issue_id = page.id ${ord}`,
  nosets: `SELECT page.* FROM (${inner}) page ${ord}`,
};
for (const mode of ['force_custom_plan', 'auto']) {
  await c.query(`SET plan_cache_mode = ${mode}`);
  for (const [k, sql] of Object.entries(variants)) {
    const name = k + mode;
    for (let i = 0; i < 200; i++) await c.query({ name, text: sql, values: [C, 50] });
    let t = process.hrtime.bigint(); for (let i = 0; i < 1000; i++) await c.query({ name, text: sql, values: [C, 50] }); 
    console.log(mode, k, (Number(process.hrtime.bigint() - t) / 1000 / 1000).toFixed(0), 'us/query (client wall)');
  }
}
const r = await c.query('EXPLAIN (ANALYZE, TIMING OFF, SUMMARY ON) ' + variants.grouped, [C, 50]); console.log(r.rows.filter(x=>/Execution|Planning/.test(x['QUERY PLAN'])).map(x=>x['QUERY PLAN']).join(' | '));
await c.end(); })();
