const { Client } = require('pg');
(async () => { const c = new Client({ connectionString: require('fs').readFileSync('/tmp/issues-db-url','utf8').trim() }); await c.connect();
await c.query(`ALTER SYSTEM SET shared_preload_libraries = 'pg_stat_statements'`); await c.query(`ALTER SYSTEM SET pg_stat_statements.track_planning = on`);
console.log('ok'); await c.end(); })();
