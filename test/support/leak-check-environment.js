// The node test environment, plus a check when a test file ends: what the file left running in the
// worker (servers, sockets, child processes, referenced timers) beyond what was there when it began,
// named with the file on stderr. Such leftovers are what makes jest report "A worker process has
// failed to exit gracefully" at the end of the suite; this says which file left them.
'use strict';
const { TestEnvironment } = require('jest-environment-node');

const counts = () => {
  const m = new Map();
  for (const r of process.getActiveResourcesInfo()) m.set(r, (m.get(r) ?? 0) + 1);
  return m;
};
/** The command lines of this worker's child processes (Linux /proc). */
const childCommands = () => {
  const fs = require('node:fs');
  try {
    return fs
      .readFileSync(`/proc/${process.pid}/task/${process.pid}/children`, 'utf8')
      .split(/\s+/)
      .filter(Boolean)
      .map((pid) => `${pid} ${fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ').trim().slice(0, 200)}`);
  } catch {
    return [];
  }
};
/** what ends on its own soon after a file ends (a socket closing, a timer of a closed pool) */
const SETTLE_MS = 1500;
const WATCHED = new Set(['TCPServerWrap', 'TCPSocketWrap', 'PipeWrap', 'ProcessWrap', 'Timeout', 'FSEventWrap', 'PipeServerWrap']);

class LeakCheckEnvironment extends TestEnvironment {
  constructor(config, context) {
    super(config, context);
    this.testPath = context.testPath;
  }

  async setup() {
    await super.setup();
    this.before = counts();
  }

  async teardown() {
    const deadline = Date.now() + SETTLE_MS;
    let extra = [];
    for (;;) {
      const now = counts();
      extra = [...now]
        .filter(([k, n]) => WATCHED.has(k) && n > (this.before.get(k) ?? 0))
        .map(([k, n]) => `${k} +${n - (this.before.get(k) ?? 0)}`);
      if (extra.length === 0 || Date.now() > deadline) break;
      await new Promise((r) => setTimeout(r, 100).unref());
    }
    if (extra.some((e) => e.startsWith('ProcessWrap'))) extra.push(`children: ${childCommands().join(' | ')}`);
    if (extra.length)
      process.stderr.write(`leak check: ${require('node:path').relative(process.cwd(), this.testPath)} left ${extra.join(', ')}\n`);
    await super.teardown();
  }
}

module.exports = LeakCheckEnvironment;
