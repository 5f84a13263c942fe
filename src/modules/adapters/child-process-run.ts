import { ChildProcess, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { inaccessibleReason, ProcessIdentity, unexecutableReason, unreadableReason } from '../../common/process/agent-user';
import { findCommand, prepareAgentSpawn, SandboxSpec } from '../../common/process/agent-sandbox';
import type { AdapterRun, EnvironmentCheck } from './adapter.types';
import type { LogStream, RunOutcome } from './run.types';

export interface ChildRunOptions {
  command: string;
  args: string[];
  cwd?: string;
  env: Record<string, string>;
  /** written to stdin, then stdin is closed; undefined = no stdin */
  stdin?: string;
  /** 0 = no timeout */
  timeoutSec: number;
  graceSec: number;
  log(stream: LogStream, chunk: string): void;
  /** called with each complete stdout line (CLI runtimes parse JSON lines) */
  onStdoutLine?(line: string): void;
  /** the unprivileged user the process runs as (null/undefined = the service's user) */
  runAs?: ProcessIdentity | null;
  /** how it is sandboxed (identities folder, namespaces); without it a plain setpriv drop */
  sandbox?: Omit<SandboxSpec, 'identity'>;
  /** the process exists; its pid is its process group id */
  onSpawn?(pgid: number): void;
}

/** Variables of the service's own environment a child may see; the rest (keys, secrets) never leaks. */
const INHERITED_ENV = ['PATH', 'HOME', 'USER', 'LOGNAME', 'SHELL', 'LANG', 'LC_ALL', 'LC_CTYPE', 'TZ', 'TMPDIR', 'TERM'];

export function baseChildEnv(): Record<string, string> {
  const out: Record<string, string> = {};
  for (const k of INHERITED_ENV) if (process.env[k] !== undefined) out[k] = process.env[k] as string;
  return out;
}

const isFile = (p: string) => {
  try {
    return fs.statSync(p).isFile();
  } catch {
    return false;
  }
};

export { findCommand };

export function commandCheck(command: string, env?: Record<string, string>): EnvironmentCheck {
  const found = findCommand(command, env?.PATH ?? process.env.PATH);
  return found
    ? { name: 'command', ok: true, message: `${command} found at ${found}` }
    : { name: 'command', ok: false, message: `${command} is not installed or not on PATH (adapter_command_not_found)` };
}

/**
 * Spawns a command without a shell in its own process group. Timeout or cancel: SIGTERM to the
 * whole group, SIGKILL after graceSec. Exit 0 = succeeded, other exits = failed, timeout = timed_out.
 */
export function runChild(o: ChildRunOptions): AdapterRun {
  const refused = preflight(o);
  if (refused) return { done: Promise.resolve(refused), cancel: () => undefined };
  const run = new ChildRun(o);
  return { done: run.done, cancel: (reason, graceSec) => run.cancel(reason, graceSec) };
}

/** Cuts a stream into lines: one pass over each chunk, the unfinished rest kept for the next one. */
class LineSplitter {
  private pending = '';

  constructor(private readonly onLine: (line: string) => void) {}

  push(chunk: string): void {
    const text = this.pending ? this.pending + chunk : chunk;
    let from = 0;
    let i: number;
    while ((i = text.indexOf('\n', from)) >= 0) {
      this.onLine(text.slice(from, i));
      from = i + 1;
    }
    this.pending = from === 0 ? text : text.slice(from);
    if (this.pending.length > 1_000_000) this.pending = '';
  }

  /** The last line, when the stream ended without a newline. */
  flush(): void {
    if (this.pending) this.onLine(this.pending);
    this.pending = '';
  }
}

/** One spawned process: its output, its deadline, how it is stopped, and how it ended. */
class ChildRun {
  readonly done: Promise<RunOutcome>;
  private resolve: (o: RunOutcome) => void = () => undefined;
  private readonly child: ChildProcess;
  private readonly namespaced: boolean;
  private readonly lines: LineSplitter | null;
  private readonly timers: NodeJS.Timeout[] = [];
  private ending: 'timeout' | 'cancel' | null = null;
  private cancelReason = '';
  /** when the group gets its SIGKILL once terminating (epoch ms) */
  private killAt = Infinity;
  private settled = false;
  private closed = false;

  constructor(private readonly o: ChildRunOptions) {
    this.done = new Promise<RunOutcome>((resolve) => (this.resolve = resolve));
    const prepared = prepareAgentSpawn(
      { identity: o.runAs ?? null, root: o.sandbox?.root ?? '', namespaces: o.sandbox?.namespaces ?? 'off' },
      o.command,
      o.args,
      {
        cwd: o.cwd,
        env: o.env,
        detached: true,
        shell: false,
        stdio: [o.stdin === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'] as ('ignore' | 'pipe')[],
      },
    );
    this.namespaced = prepared.namespaced;
    this.child = spawn(prepared.command, prepared.args, prepared.options);
    if (this.child.pid !== undefined) o.onSpawn?.(this.child.pid);
    this.lines = o.onStdoutLine ? new LineSplitter(o.onStdoutLine) : null;
    this.wire();
    if (o.timeoutSec > 0) this.after(o.timeoutSec * 1000, () => this.terminate('timeout'));
  }

  cancel(reason: string, graceSec?: number): void {
    if (!this.ending) this.cancelReason = reason;
    this.terminate('cancel', graceSec ?? this.o.graceSec);
  }

  private wire(): void {
    const { child, o } = this;
    child.stdout?.setEncoding('utf8');
    child.stdout?.on('data', (d: string) => {
      o.log('stdout', d);
      this.lines?.push(d);
    });
    child.stderr?.setEncoding('utf8');
    child.stderr?.on('data', (d: string) => o.log('stderr', d));
    if (o.stdin !== undefined && child.stdin) {
      child.stdin.on('error', () => undefined);
      child.stdin.end(o.stdin);
    }
    child.on('error', (err: NodeJS.ErrnoException) => {
      o.log('system', `spawn failed: ${err.message}\n`);
      this.finish({ status: 'failed', errorCode: SPAWN_ERRORS[err.code ?? ''] ?? 'adapter_spawn_failed', error: err.message });
    });
    child.on('close', () => (this.closed = true));
    child.on('exit', (code, signal) => this.exited(code, signal));
  }

  /** SIGTERM to the group, SIGKILL after graceSec; asked again with a shorter grace, the SIGKILL comes sooner. */
  private terminate(why: 'timeout' | 'cancel', graceSec = this.o.graceSec): void {
    if (this.settled) return;
    if (!this.ending) {
      this.ending = why;
      this.o.log(
        'system',
        why === 'timeout'
          ? `timeout after ${this.o.timeoutSec}s: SIGTERM to the process group\n`
          : `cancelled (${this.cancelReason}): SIGTERM to the process group\n`,
      );
      signalGroup(this.child, 'SIGTERM');
    }
    const killAt = Date.now() + graceSec * 1000;
    if (killAt >= this.killAt) return;
    this.killAt = killAt;
    this.after(graceSec * 1000, () => {
      if (this.settled) return;
      this.o.log('system', `still alive after ${graceSec}s grace: SIGKILL\n`);
      signalGroup(this.child, 'SIGKILL');
    });
  }

  private exited(code: number | null, signal: NodeJS.Signals | null): void {
    // anything the leader left behind in its group goes with it: no run outlives its process
    signalGroup(this.child, 'SIGKILL');
    const outcome = exitOutcome(
      this.o,
      { ending: this.ending, cancelReason: this.cancelReason, namespaced: this.namespaced },
      code,
      signal,
    );
    // let the pipes drain (the last output lines), but never wait long
    const end = () => {
      this.lines?.flush();
      this.finish(outcome);
    };
    if (this.closed) end();
    else {
      this.child.once('close', end);
      setTimeout(end, 500).unref();
    }
  }

  private finish(outcome: RunOutcome): void {
    if (this.settled) return;
    this.settled = true;
    this.timers.forEach(clearTimeout);
    this.resolve(outcome);
  }

  private after(ms: number, fn: () => void): void {
    const t = setTimeout(fn, ms);
    t.unref();
    this.timers.push(t);
  }
}

/** What refuses a run before it starts: a missing cwd or command, or one the run's identity cannot use. */
function preflight(o: ChildRunOptions): RunOutcome | null {
  if (o.cwd && !fs.existsSync(o.cwd)) {
    return { status: 'failed', errorCode: 'adapter_cwd_not_found', error: `working directory ${o.cwd} does not exist` };
  }
  if (!findCommand(o.command, o.env.PATH)) {
    o.log('system', `command not found: ${o.command}\n`);
    return { status: 'failed', errorCode: 'adapter_command_not_found', error: `command not found: ${o.command}` };
  }
  const denied = o.cwd ? inaccessibleReason(o.cwd, o.runAs ?? null) : null;
  if (denied) {
    o.log('system', `working directory not accessible: ${denied}\n`);
    return {
      status: 'failed',
      errorCode: 'adapter_cwd_not_accessible',
      error: `working directory ${o.cwd}: ${denied}; make it accessible to that user`,
    };
  }
  const runAs = o.runAs ?? null;
  const resolved = findCommand(o.command, o.env.PATH) ?? o.command;
  // the identity must be able to run what it is given: say so plainly rather than let the program fail obscurely
  const unreadable =
    [resolved, ...o.args.filter((a) => path.isAbsolute(a) && isFile(a))].map((p) => unreadableReason(p, runAs)).find((r) => r !== null) ??
    unexecutableReason(resolved, runAs);
  if (unreadable) {
    o.log('system', `${unreadable}\n`);
    return { status: 'failed', errorCode: 'adapter_command_not_accessible', error: unreadable };
  }
  return null;
}

/** How a run ended, from the way its process exited. */
function exitOutcome(
  o: ChildRunOptions,
  run: { ending: 'timeout' | 'cancel' | null; cancelReason: string; namespaced: boolean },
  code: number | null,
  signal: NodeJS.Signals | null,
): RunOutcome {
  if (run.ending === 'timeout')
    return { status: 'timed_out', exitCode: code, errorCode: 'timeout', error: `timed out after ${o.timeoutSec}s` };
  if (run.ending === 'cancel')
    return { status: 'cancelled', exitCode: code, errorCode: 'cancelled', error: run.cancelReason || 'cancelled' };
  if (code === 0) return { status: 'succeeded', exitCode: 0 };
  if (code !== null && run.namespaced && code > 128 && code < 160) {
    // the namespace's init reports a killed command as 128 + the signal number
    const sig = Object.entries(os.constants.signals).find(([, n]) => n === code - 128)?.[0] ?? `signal ${code - 128}`;
    return { status: 'failed', exitCode: null, errorCode: 'adapter_killed', error: `process killed by ${sig}` };
  }
  if (code !== null)
    return { status: 'failed', exitCode: code, errorCode: 'adapter_exit_nonzero', error: `process exited with code ${code}` };
  return { status: 'failed', exitCode: null, errorCode: 'adapter_killed', error: `process killed by ${signal}` };
}

/** The error code of a failed spawn, by its errno code (others: adapter_spawn_failed). */
const SPAWN_ERRORS: Record<string, string> = { ENOENT: 'adapter_command_not_found', EACCES: 'adapter_command_not_executable' };

/** A signal to the child's whole process group (to the child alone when the group is gone). */
function signalGroup(child: ChildProcess, sig: NodeJS.Signals): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, sig);
  } catch {
    try {
      child.kill(sig);
    } catch {
      /* already gone */
    }
  }
}
