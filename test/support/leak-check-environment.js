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

/** A handle's kind, with what names it (address and port, pid and command line). */
const describeHandle = (h) => {
  const kind = h?.constructor?.name ?? typeof h;
  if (h && typeof h.fd === 'number' && h.fd <= 2) return null; // stdio
  if (kind === 'Socket' || kind === 'Server') {
    const a = typeof h.address === 'function' ? h.address() : null;
    return `${kind} ${h.remoteAddress ?? ''}:${h.remotePort ?? ''} local ${a?.port ?? h.localPort ?? ''} fd ${h._handle?.fd ?? '?'}`;
  }
  if (kind === 'ChildProcess') return `${kind} ${h.pid} ${(h.spawnargs ?? []).join(' ').slice(0, 200)}`;
  return kind;
};

// When jest ends the worker it removes its IPC listener and waits for the process to exit; jest
// force-exits a worker still there after 500 ms ("A worker process has failed to exit gracefully").
// A worker whose event loop is still busy 250 ms after the end names here what keeps it alive
// (timers show in the resources only). A worker whose loop is empty can still take longer than 500
// ms to be gone: the size of its memory decides that (jest.config.js, workerIdleMemoryLimit).
if (!process.__leakCheckExitWatch) {
  process.__leakCheckExitWatch = true;
  process.on('removeListener', (event) => {
    if (event !== 'message' || process.listenerCount('message') > 0) return;
    const endedAt = Date.now();
    setTimeout(() => {
      const handles = process._getActiveHandles().map(describeHandle).filter(Boolean);
      const fs = require('node:fs');
      fs.writeSync(
        2,
        `leak check: worker ${process.pid} still alive ${Date.now() - endedAt} ms after jest ended it: ${process.getActiveResourcesInfo().join(', ')}; ` +
          `handles: ${handles.join(' | ') || 'none'}; children: ${childCommands().join(' | ') || 'none'}\n`,
      );
    }, 250).unref();
  });
}

module.exports = LeakCheckEnvironment;
