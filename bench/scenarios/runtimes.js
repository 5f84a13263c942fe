'use strict';
// Stream parsing of the coding-agent runtimes: 20 concurrent `claude_local` runs, each printing
// 10,000 stream-json lines (a stand-in binary prints what Claude Code prints). Two rows:
// - `assistant`: system/init, an assistant message with usage per call, one result (the stream
//   without partial messages; the same input before and after a change of the parser);
// - `partial`: what Claude Code prints with --include-partial-messages (the service's invocation):
//   per call the API's events (message_start, content block start / 3 deltas / stop, message_delta,
//   message_stop) and the assistant message, 9 lines a call.
// Reports the service's CPU per event line (its utime+stime from /proc, the embedded Postgres not
// included); target < 20 us per line. BENCH_RUNTIME_STREAM=assistant|partial runs one row.
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { api } = require('../lib');

const RUNS = Number(process.env.BENCH_RUNTIME_RUNS ?? 20);
const LINES = Number(process.env.BENCH_RUNTIME_LINES ?? 10_000);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

const STREAMS = (process.env.BENCH_RUNTIME_STREAM ?? 'assistant,partial').split(',');

const script = (stream) => `#!/usr/bin/env node
const partial = ${stream === 'partial'};
const n = partial ? Math.round(${LINES} / 9) : ${LINES};
const out = [];
const session = 'bench-' + process.pid + '-' + Date.now();
const ev = (id, event) => out.push(JSON.stringify({ type: 'stream_event', event, session_id: session, parent_tool_use_id: null,
  uuid: 'u-' + out.length, api_message_id: id }));
out.push(JSON.stringify({ type: 'system', subtype: 'init', session_id: session, model: 'claude-sonnet-4-5' }));
for (let i = 0; i < n; i++) {
  const id = 'msg_' + i;
  const usage = { input_tokens: 10, cache_read_input_tokens: 5, cache_creation_input_tokens: 0, output_tokens: 1 };
  if (partial) {
    ev(id, { type: 'message_start', message: { id, type: 'message', role: 'assistant', model: 'claude-sonnet-4-5', content: [], usage } });
    ev(id, { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } });
    for (let d = 0; d < 3; d++) ev(id, { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'step ' + i } });
    ev(id, { type: 'content_block_stop', index: 0 });
  }
  out.push(JSON.stringify({ type: 'assistant', session_id: session, message: { id, model: 'claude-sonnet-4-5', role: 'assistant',
    content: [{ type: 'text', text: 'step ' + i }], usage: { ...usage, output_tokens: partial ? 1 : 2 } } }));
  if (partial) {
    ev(id, { type: 'message_delta', delta: { stop_reason: 'end_turn' }, usage: { ...usage, output_tokens: 2 } });
    ev(id, { type: 'message_stop' });
  }
}
out.push(JSON.stringify({ type: 'result', subtype: 'success', session_id: session, is_error: false, num_turns: n, total_cost_usd: 0.01,
  usage: { input_tokens: 10 * n, cache_read_input_tokens: 5 * n, cache_creation_input_tokens: 0, output_tokens: 2 * n } }));
process.stdout.write(out.join('\\n') + '\\n');
`;

const cpuOf = (pid) => {
  const f = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  const rest = f.slice(f.lastIndexOf(')') + 2).split(' ');
  return (Number(rest[11]) + Number(rest[12])) / 100; // seconds (USER_HZ 100)
};

module.exports = async function runtimes(baseUrl, svc) {
  const rows = [];
  for (const stream of STREAMS) rows.push(await streamRow(baseUrl, svc, stream));
  return rows;
};

async function streamRow(baseUrl, svc, stream) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-bench-rt-'));
  fs.chmodSync(dir, 0o755);
  const bin = path.join(dir, 'claude');
  fs.writeFileSync(bin, script(stream), { mode: 0o755 });
  try {
    const co = await api(baseUrl, 'POST', '/api/companies', { name: `Runtime Bench ${Date.now()}` });
    const agents = [];
    for (let i = 0; i < RUNS; i++) {
      const agent = await api(baseUrl, 'POST', `/api/companies/${co.id}/agents`, {
        name: `stream-${i}`,
        role: 'engineer',
        adapterType: 'claude_local',
        adapterConfig: { command: bin, model: 'claude-sonnet-4-5', env: { ANTHROPIC_API_KEY: 'bench' }, timeoutSec: 300 },
      });
      agents.push(agent.id);
    }
    await sleep(500);
    const before = cpuOf(svc.pid);
    const started = Date.now();
    const runs = [];
    for (const id of agents) {
      const w = await api(baseUrl, 'POST', `/api/agents/${id}/wakeup`, { source: 'on_demand', triggerDetail: 'manual', reason: 'bench' });
      runs.push(w.id);
    }
    const ended = {};
    for (;;) {
      for (const r of runs) {
        if (ended[r]) continue;
        const got = await api(baseUrl, 'GET', `/api/heartbeat-runs/${r}`);
        if (!['queued', 'running'].includes(got.status)) ended[r] = got;
      }
      if (Object.keys(ended).length === runs.length) break;
      await sleep(100);
    }
    const cpu = cpuOf(svc.pid) - before;
    const wall = (Date.now() - started) / 1000;
    const calls = stream === 'partial' ? Math.round(LINES / 9) : LINES;
    const lines = RUNS * ((stream === 'partial' ? calls * 9 : calls) + 2);
    const ok = Object.values(ended).filter((r) => r.status === 'succeeded').length;
    const usage = Object.values(ended)[0].usageJson ?? Object.values(ended)[0].usage ?? null;
    console.log(`runtimes (${stream}): ${ok}/${RUNS} succeeded; first run usage ${JSON.stringify(usage)}`);
    return {
      name: `claude_local ${stream} stream: ${RUNS} runs x ${lines / RUNS} lines, service CPU us/line`,
      reqPerSec: Math.round(lines / wall),
      p50Ms: `${((cpu * 1e6) / lines).toFixed(1)}us`,
      p99Ms: '-',
      errors: RUNS - ok,
      non2xx: 0,
    };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
