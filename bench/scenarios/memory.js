'use strict';
// Memory of the service's process tree (the Node process and everything it started: the embedded
// Postgres and its backends), as PSS (shared pages split among the processes that map them) and RSS,
// read from /proc: at start, after seeding BENCH_MEMORY_ISSUES issues (default 2,000), and at peak
// under a mixed load at 10 connections (POST issue, GET a list of 50, GET one issue), sampled every
// 200 ms. Targets (issue 31): PSS < 450 MiB after the seed, RSS < 1.5 GiB at peak.
const fs = require('node:fs');
const { api, load } = require('../lib');

const ISSUES = Number(process.env.BENCH_MEMORY_ISSUES ?? 2000);

/** the process and all its descendants */
function tree(root) {
  const children = new Map();
  for (const p of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(p)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${p}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (!children.has(ppid)) children.set(ppid, []);
      children.get(ppid).push(Number(p));
    } catch {
      // gone meanwhile
    }
  }
  const out = [];
  const walk = (pid) => {
    out.push(pid);
    for (const c of children.get(pid) ?? []) walk(c);
  };
  walk(root);
  return out;
}

/** kB of a field of /proc/<pid>/smaps_rollup, summed over the processes */
function sum(pids, field) {
  let kb = 0;
  for (const pid of pids) {
    try {
      const m = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(fs.readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'));
      if (m) kb += Number(m[1]);
    } catch {
      // gone meanwhile
    }
  }
  return kb;
}

const mib = (kb) => (kb / 1024).toFixed(0);

function snapshot(pid) {
  const pids = tree(pid);
  return { processes: pids.length, pss: sum(pids, 'Pss'), rss: sum(pids, 'Rss'), nodeRss: sum([pid], 'Rss') };
}

module.exports = async function memory(baseUrl, svc) {
  const print = (label, s) =>
    console.log(
      `${label.padEnd(48)} PSS ${mib(s.pss)} MiB  RSS ${mib(s.rss)} MiB  (Node RSS ${mib(s.nodeRss)} MiB, ${s.processes} processes)`,
    );
  print('memory at start', snapshot(svc.pid));
  const c = await api(baseUrl, 'POST', '/api/companies', { name: 'Bench Memory' });
  for (let i = 0; i < ISSUES; i += 20)
    await Promise.all(
      Array.from({ length: Math.min(20, ISSUES - i) }, (_, k) =>
        api(baseUrl, 'POST', `/api/companies/${c.id}/issues`, {
          title: `Memory ${i + k} deploy the billing service`,
          description: 'A description of a few words, as issues have. '.repeat(4),
          priority: 'medium',
        }),
      ),
    );
  // settle: the seed's garbage collected, the pool's connections idle
  await new Promise((r) => setTimeout(r, 3000));
  print(`memory after seeding ${ISSUES} issues`, snapshot(svc.pid));

  const one = (await api(baseUrl, 'GET', `/api/companies/${c.id}/issues?limit=1`))[0];
  let peak = { pss: 0, rss: 0, nodeRss: 0, processes: 0 };
  const sampler = setInterval(() => {
    const s = snapshot(svc.pid);
    if (s.rss > peak.rss) peak = s;
  }, 200);
  let n = 0;
  try {
    const row = await load('mixed load (POST issue, GET list of 50, GET one)', {
      url: `${baseUrl}/api/companies/${c.id}/issues?limit=50`,
      requests: [
        {
          method: 'POST',
          path: `/api/companies/${c.id}/issues`,
          headers: { 'content-type': 'application/json' },
          setupRequest: (req) => ({ ...req, body: JSON.stringify({ title: `Peak ${n++} deploy`, priority: 'high' }) }),
        },
        { method: 'GET', path: `/api/companies/${c.id}/issues?limit=50` },
        { method: 'GET', path: `/api/issues/${one.id}` },
      ],
    });
    print('memory at peak (highest RSS sample)', peak);
    return [row];
  } finally {
    clearInterval(sampler);
  }
};
