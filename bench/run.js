#!/usr/bin/env node
// npm run bench [-- scenario ...]: starts the built service on a fresh embedded database and
// reports req/s and latency per scenario (bench/scenarios/*.js). BENCH_SECONDS sets the duration.
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const { startService } = require('./lib');

async function main() {
  const dir = path.join(__dirname, 'scenarios');
  const all = fs
    .readdirSync(dir)
    .filter((f) => f.endsWith('.js'))
    .map((f) => f.replace(/\.js$/, ''));
  const wanted = process.argv.slice(2).length ? process.argv.slice(2) : all;
  const svc = await startService();
  console.log(`service healthy after ${svc.startupMs} ms at ${svc.baseUrl}`);
  try {
    for (const name of wanted) {
      if (!all.includes(name)) throw new Error(`unknown scenario ${name}; have ${all.join(', ')}`);
      const rows = await require(path.join(dir, name))(svc.baseUrl, svc);
      for (const r of rows) {
        console.log(
          `${r.name.padEnd(48)} ${String(r.reqPerSec).padStart(6)} req/s  p50 ${r.p50Ms} ms  p99 ${r.p99Ms} ms  errors ${r.errors}  non2xx ${r.non2xx}${
            r.cpuMsPerReq != null ? `  cpu ${r.cpuMsPerReq.toFixed(3)} ms/req` : ''
          }`,
        );
      }
    }
  } finally {
    await svc.stop();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
