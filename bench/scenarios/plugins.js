'use strict';
// Plugins:
//  1. tool execution through a worker (word-tools example, word-count) at 10 connections; target p99 < 20 ms;
//  2. a crashed worker (SIGKILL) back to running, 3 times; target < 2 s each;
//  3. service start with 100 installed, enabled plugins vs none (a second service process on the
//     same database); target < 100 ms added (workers start on first use).
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { Client } = require('pg');
const { api, load, startService, databaseUrl } = require('../lib');

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const examples = path.join(__dirname, '..', '..', 'examples', 'plugins');

async function startupMs(svc) {
  const times = [];
  for (let i = 0; i < 3; i++) {
    const other = await startService({ DATABASE_URL: databaseUrl(svc) });
    times.push(other.startupMs);
    await other.stop();
  }
  return Math.min(...times);
}

module.exports = async function plugins(baseUrl, svc) {
  const rows = [];
  const tool = await api(baseUrl, 'POST', '/api/plugins/install', { localPath: path.join(examples, 'word-tools') });
  await api(baseUrl, 'POST', `/api/plugins/${tool.id}/enable`);
  rows.push(
    await load('plugins: tool execute (word-count)', {
      url: `${baseUrl}/api/plugins/tools/execute`,
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ tool: 'word-tools:word-count', input: { text: 'a few words to count here' } }),
    }),
  );

  const recoveries = [];
  for (let i = 0; i < 3; i++) {
    // a worker is killed once it runs (after the load, or the previous recovery, it may still be starting)
    let before = (await api(baseUrl, 'GET', `/api/plugins/${tool.id}`)).worker;
    for (const t = Date.now(); !(before.state === 'running' && before.pid); await sleep(20)) {
      if (Date.now() - t > 30_000) throw new Error(`worker not running: ${JSON.stringify(before)}`);
      before = (await api(baseUrl, 'GET', `/api/plugins/${tool.id}`)).worker;
    }
    process.kill(before.pid, 'SIGKILL');
    const t0 = Date.now();
    for (;;) {
      const w = (await api(baseUrl, 'GET', `/api/plugins/${tool.id}`)).worker;
      if (w.state === 'running' && w.pid !== before.pid) break;
      if (Date.now() - t0 > 30_000) throw new Error('worker did not come back');
      await sleep(20);
    }
    recoveries.push(Date.now() - t0);
    await sleep(200);
  }
  rows.push({
    name: `plugins: crash -> running (ms, ${recoveries.join(', ')})`,
    reqPerSec: '-',
    p50Ms: recoveries.sort((a, b) => a - b)[1],
    p99Ms: Math.max(...recoveries),
    errors: 0,
    non2xx: 0,
  });

  const base = await startupMs(svc);
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-plugins-'));
  try {
    for (let i = 0; i < 100; i++) {
      const dir = path.join(tmp, `p${i}`);
      fs.cpSync(path.join(examples, 'team-pulse'), dir, { recursive: true });
      const m = JSON.parse(fs.readFileSync(path.join(dir, 'plugin.json'), 'utf8'));
      m.key = `bench-pulse-${i}`;
      m.events = [];
      m.capabilities = m.capabilities.filter((c) => c !== 'events.subscribe');
      fs.writeFileSync(path.join(dir, 'plugin.json'), JSON.stringify(m));
      await api(baseUrl, 'POST', '/api/plugins/install', { localPath: dir });
    }
    // enabled in the database without starting 100 workers in the bench's own service
    const db = new Client({ connectionString: databaseUrl(svc) });
    await db.connect();
    await db.query(`UPDATE plugins SET status = 'enabled', enabled_at = now() WHERE plugin_key LIKE 'bench-pulse-%'`);
    await db.end();
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
  const withPlugins = await startupMs(svc);
  rows.push({
    name: `plugins: start, 0 vs 100 plugins (${base} vs ${withPlugins} ms)`,
    reqPerSec: '-',
    p50Ms: withPlugins - base,
    p99Ms: withPlugins - base,
    errors: 0,
    non2xx: 0,
  });
  return rows;
};
