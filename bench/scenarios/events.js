// Live events: latency from a committed change on instance A to SSE clients spread over A and a
// second instance B on the same database (BENCH_EVENT_CLIENTS connections, default 1,000).
'use strict';
const http = require('node:http');
const { api, databaseUrl, startService } = require('../lib');

function openSse(baseUrl, companyId, onEvent) {
  return new Promise((resolve, reject) => {
    const req = http.get(`${baseUrl}/api/companies/${companyId}/events`, { agent: false }, (res) => {
      if (res.statusCode !== 200) return reject(new Error(`SSE ${res.statusCode}`));
      res.setEncoding('utf8');
      let buf = '';
      res.on('data', (d) => {
        buf += d;
        let i;
        while ((i = buf.indexOf('\n\n')) >= 0) {
          const block = buf.slice(0, i);
          buf = buf.slice(i + 2);
          const line = block.split('\n').find((l) => l.startsWith('data: '));
          if (line) onEvent(JSON.parse(line.slice(6)));
        }
      });
      resolve(req);
    });
    req.on('error', reject);
  });
}

const pct = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))];

module.exports = async function events(baseUrl, svc) {
  const second = await startService({ DATABASE_URL: databaseUrl(svc) });
  const clients = Number(process.env.BENCH_EVENT_CLIENTS ?? 1000);
  const changes = Number(process.env.BENCH_EVENT_CHANGES ?? 100);
  try {
    const company = await api(baseUrl, 'POST', '/api/companies', { name: `Events bench ${Date.now()}` });
    // latency = arrival - the moment A answered the POST (the change had committed); an event that
    // arrives before the client has read that answer counts as 0
    const committedAt = new Map();
    const arrivals = [];
    const onEvent = (e) => {
      const title = e.type === 'activity.logged' ? e.payload?.details?.title : undefined;
      if (title?.startsWith('bench change ')) arrivals.push([title, performance.now()]);
    };
    const reqs = [];
    for (let i = 0; i < clients; i++) {
      reqs.push(await openSse(i % 2 === 0 ? baseUrl : second.baseUrl, company.id, onEvent));
    }
    await new Promise((r) => setTimeout(r, 1000));
    const started = performance.now();
    for (let i = 0; i < changes; i++) {
      const title = `bench change ${i}`;
      await api(baseUrl, 'POST', `/api/companies/${company.id}/issues`, { title });
      committedAt.set(title, performance.now());
      await new Promise((r) => setTimeout(r, 20));
    }
    const expected = clients * changes;
    const deadline = Date.now() + 30_000;
    while (arrivals.length < expected && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    const seconds = (performance.now() - started) / 1000;
    for (const r of reqs) r.destroy();
    const latencies = arrivals.map(([title, at]) => Math.max(0, at - committedAt.get(title))).sort((x, y) => x - y);
    return [
      {
        name: `events: ${clients} SSE clients on 2 instances, ${changes} changes`,
        reqPerSec: Math.round(latencies.length / seconds),
        p50Ms: Math.round(pct(latencies, 50)),
        p99Ms: Math.round(pct(latencies, 99)),
        errors: expected - latencies.length, // events not delivered
        non2xx: 0,
      },
    ];
  } finally {
    await second.stop();
  }
};
