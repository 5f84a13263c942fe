#!/usr/bin/env node
// node bench/cpu-profile-summary.js <file.cpuprofile> [top]: self time by package / source area and
// the top functions, from a V8 CPU profile (node --cpu-prof). "tracing" is everything of
// OpenTelemetry plus the service's own tracing hooks (src/common/tracing).
'use strict';
const fs = require('node:fs');

const prof = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
const top = Number(process.argv[3] ?? 25);
const byId = new Map(prof.nodes.map((n) => [n.id, n]));
const self = new Map();
const dt = prof.timeDeltas;
for (let i = 0; i < prof.samples.length; i++) self.set(prof.samples[i], (self.get(prof.samples[i]) ?? 0) + (dt[i] ?? 0));
const area = (url) => {
  if (!url) return '(native/vm)';
  const m = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (m)
    return /^(@opentelemetry|protobufjs|@protobufjs|shimmer|require-in-the-middle|import-in-the-middle)/.test(m[1])
      ? `tracing: ${m[1]}`
      : m[1];
  if (url.includes('/common/tracing/')) return 'tracing: src/common/tracing';
  if (url.startsWith('node:')) return 'node core';
  if (url.includes('/dist/src/')) return 'service: ' + url.split('/dist/src/')[1].split('/').slice(0, 2).join('/');
  return url;
};
const areas = new Map();
const fns = new Map();
let total = 0;
for (const [id, us] of self) {
  const n = byId.get(id);
  const cf = n.callFrame;
  if (cf.functionName === '(idle)' || cf.functionName === '(program)') continue;
  total += us;
  const a = area(cf.url);
  areas.set(a, (areas.get(a) ?? 0) + us);
  const key = `${cf.functionName || '(anonymous)'} ${cf.url.replace(/.*node_modules\//, '').replace(/.*dist\//, '')}:${cf.lineNumber}`;
  fns.set(key, (fns.get(key) ?? 0) + us);
}
const pct = (us) => ((us / total) * 100).toFixed(1).padStart(5) + ' %';
console.log(`busy ${(total / 1e6).toFixed(2)} s (idle and (program) excluded)`);
let tracingShare = 0;
for (const [a, us] of [...areas].sort((x, y) => y[1] - x[1]).slice(0, top)) {
  console.log(`${pct(us)}  ${a}`);
}
for (const [a, us] of areas) if (a.startsWith('tracing')) tracingShare += us;
console.log(`tracing self time: ${pct(tracingShare)}`);
console.log('--- top functions');
for (const [f, us] of [...fns].sort((x, y) => y[1] - x[1]).slice(0, top)) console.log(`${pct(us)}  ${f}`);
if (process.env.AREA) {
  console.log(`--- top functions in areas matching ${process.env.AREA}`);
  const re = new RegExp(process.env.AREA);
  const inArea = [...fns].filter(([f]) => re.test(f));
  for (const [f, us] of inArea.sort((x, y) => y[1] - x[1]).slice(0, top)) console.log(`${pct(us)}  ${f}`);
}
