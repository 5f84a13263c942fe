const { Client } = require('pg');
(async () => { const c = new Client({ connectionString: require('fs').readFileSync('/tmp/issues-db-url','utf8').trim() }); await c.connect();
await c.query('CREATE TABLE IF NOT EXISTS tmp_commit_probe (id int primary key, n int)'); await c.query('INSERT INTO tmp_commit_probe VALUES (1,0) ON CONFLICT DO NOTHING');
for (const sc of ['on', 'off']) {
  await c.query(`SET synchronous_commit = ${sc}`);
  let t = process.hrtime.bigint(); for (let i = 0; i < 500; i++) { await c.query('BEGIN'); await c.query('UPDATE tmp_commit_probe SET n = n + 1 WHERE id = 1'); await c.query('COMMIT'); }
  console.log('synchronous_commit', sc, Number(process.hrtime.bigint() - t) / 500 / 1000, 'us per tx');
}
console.log((await c.query(`SELECT name, setting FROM pg_settings WHERE name IN ('fsync','synchronous_commit','wal_sync_method','commit_delay','full_page_writes','wal_level','shared_buffers','max_wal_size','checkpoint_timeout')`)).rows.map(r => r.name + '=' + r.setting).join(' '));
await c.query('DROP TABLE tmp_commit_probe'); await c.end(); })();
