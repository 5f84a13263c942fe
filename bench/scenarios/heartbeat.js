'use strict';
const { api } = require('../lib');

// Heartbeat engine: wake-to-start latency of a `process` agent running `true` (server timestamps:
// run createdAt -> startedAt), and runs completed per second with 50 agents woken at once.
// Needs the agents API (POST /api/companies/{id}/agents). Targets: p99 < 250 ms, >= 50 runs/s.

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const pct = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] : 0;
};

async function waitEnded(baseUrl, runId) {
  for (;;) {
    const r = await api(baseUrl, 'GET', `/api/heartbeat-runs/${runId}`);
    if (!['queued', 'running'].includes(r.status)) return r;
    await sleep(10);
  }
}

module.exports = async function heartbeat(baseUrl) {
  const co = await api(baseUrl, 'POST', '/api/companies', { name: `Heartbeat Bench ${Date.now()}` });
  const agent = (name) => api(baseUrl, 'POST', `/api/companies/${co.id}/agents`, {
    name, role: 'general', adapterType: 'process', adapterConfig: { command: 'true' },
  });
  const wake = (id) => api(baseUrl, 'POST', `/api/agents/${id}/wakeup`, { source: 'on_demand', triggerDetail: 'manual', reason: 'bench' });

  // 1. latency: 100 sequential wakes of one agent
  const one = await agent('latency');
  const lat = [];
  for (let i = 0; i < 100; i++) {
    const run = await wake(one.id);
    const done = await waitEnded(baseUrl, run.id);
    lat.push(new Date(done.startedAt).getTime() - new Date(done.createdAt).getTime());
  }

  // 2. throughput: 50 agents woken at once, 4 rounds
  const agents = await Promise.all(Array.from({ length: 50 }, (_, i) => agent(`burst-${i}`)));
  const started = Date.now();
  let completed = 0;
  const errors = [];
  for (let round = 0; round < 4; round++) {
    const runs = await Promise.all(agents.map((a) => wake(a.id)));
    const ends = await Promise.all(runs.map((r) => waitEnded(baseUrl, r.id)));
    completed += ends.filter((e) => e.status === 'succeeded').length;
    errors.push(...ends.filter((e) => e.status !== 'succeeded'));
  }
  const seconds = (Date.now() - started) / 1000;
  return [
    { name: 'wake -> process start (100 sequential)', reqPerSec: '-', p50Ms: pct(lat, 50), p99Ms: pct(lat, 99), errors: 0, non2xx: 0 },
    { name: 'runs completed/s (50 agents x 4 rounds)', reqPerSec: Math.round(completed / seconds), p50Ms: '-', p99Ms: '-', errors: errors.length, non2xx: 0 },
  ];
};
