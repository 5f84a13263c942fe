#!/usr/bin/env node
// npm run bench:tracing: the cost of tracing as service CPU per request, off vs on, in one run.
// Starts two services of the same build side by side (tracing off; tracing on, every trace kept and
// exported over OTLP/HTTP to a loopback receiver that discards), seeds each with BENCH_ISSUES issues,
// then alternates rounds of the same load on each (POST issue; GET list of 50) and reads the
// service process's CPU (utime+stime from /proc) around each round. On a machine shared with other
// work throughput swings with the neighbours; CPU per request much less, so that is what it compares.
// BENCH_ROUNDS (default 5), BENCH_SECONDS per round (default 3), BENCH_TRACING_ENV (extra variables
// for the traced service, e.g. "OTEL_TRACES_SAMPLER=parentbased_traceidratio OTEL_TRACES_SAMPLER_ARG=0.1").
'use strict';
const fs = require('node:fs');
const http = require('node:http');
const autocannon = require('autocannon');
const { api, startService } = require('./lib');

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 3);
const ISSUES = Number(process.env.BENCH_ISSUES ?? 2000);

const cpuOf = (pid) => {
  const f = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  const rest = f.slice(f.lastIndexOf(')') + 2).split(' ');
  return (Number(rest[11]) + Number(rest[12])) / 100;
};
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const cannon = (opts) =>
  new Promise((resolve, reject) => autocannon({ connections: 10, duration: SECONDS, ...opts }, (e, r) => (e ? reject(e) : resolve(r))));

async function seed(svc) {
  const co = await api(svc.baseUrl, 'POST', '/api/companies', { name: `Tracing AB ${Date.now()}` });
  const base = `${svc.baseUrl}/api/companies/${co.id}/issues`;
  for (let i = 0; i < ISSUES; i += 20)
    await Promise.all(
      Array.from({ length: 20 }, (_, k) =>
        api(svc.baseUrl, 'POST', `/api/companies/${co.id}/issues`, { title: `Seed ${i + k} deploy`, priority: 'medium' }),
      ),
    );
  return base;
}

async function main() {
  let spans = 0;
  const receiver = http.createServer((req, res) => {
    req.on('data', () => undefined);
    req.on('end', () => {
      spans++;
      res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
    });
  });
  await new Promise((r) => receiver.listen(0, '127.0.0.1', r));
  const extra = Object.fromEntries(
    (process.env.BENCH_TRACING_ENV ?? '')
      .split(' ')
      .filter(Boolean)
      .map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]),
  );
  const services = { off: await startService({}) };
  // BENCH_PROFILE_DIR: a CPU profile of the traced service (bench/cpu-profile-summary.js reads it)
  const nodeArgs = process.env.BENCH_SERVICE_NODE_ARGS;
  if (process.env.BENCH_PROFILE_DIR) process.env.BENCH_SERVICE_NODE_ARGS = `--cpu-prof --cpu-prof-dir=${process.env.BENCH_PROFILE_DIR}`;
  services.on = await startService({ OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${receiver.address().port}`, ...extra });
  if (nodeArgs === undefined) delete process.env.BENCH_SERVICE_NODE_ARGS;
  else process.env.BENCH_SERVICE_NODE_ARGS = nodeArgs;
  try {
    const bases = { off: await seed(services.off), on: await seed(services.on) };
    let n = 0;
    const loads = {
      'POST issue': (base) => ({
        url: base,
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        requests: [{ setupRequest: (req) => ({ ...req, body: JSON.stringify({ title: `AB load ${n++} deploy`, priority: 'high' }) }) }],
      }),
      'GET issues?limit=50': (base) => ({ url: `${base}?limit=50` }),
    };
    for (const [name, opts] of Object.entries(loads)) {
      const per = { off: [], on: [] };
      const rps = { off: [], on: [] };
      for (const mode of ['off', 'on']) await cannon({ ...opts(bases[mode]), duration: 1 }); // warm-up
      for (let round = 0; round < ROUNDS; round++) {
        const order = round % 2 ? ['on', 'off'] : ['off', 'on'];
        for (const mode of order) {
          const before = cpuOf(services[mode].pid);
          const r = await cannon(opts(bases[mode]));
          const cpu = cpuOf(services[mode].pid) - before;
          per[mode].push((cpu * 1e6) / r.requests.total);
          rps[mode].push(r.requests.average);
        }
      }
      const off = median(per.off);
      const on = median(per.on);
      console.log(
        `${name.padEnd(22)} CPU/request off ${off.toFixed(0)} us, on ${on.toFixed(0)} us (${(((on - off) / off) * 100).toFixed(1)} %); ` +
          `req/s off ${median(rps.off).toFixed(0)}, on ${median(rps.on).toFixed(0)}; ` +
          `rounds off [${per.off.map((x) => x.toFixed(0)).join(' ')}] on [${per.on.map((x) => x.toFixed(0)).join(' ')}]`,
      );
    }
    console.log(`export requests received: ${spans}`);
  } finally {
    await services.off.stop();
    await services.on.stop();
    receiver.close();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
