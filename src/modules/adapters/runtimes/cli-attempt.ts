import type { AdapterRun, AdapterRunContext } from '../adapter.types';
import { runChild, type ChildRunOptions } from '../executor-kit';
import type { RunOutcome } from '../run.types';
import type { RuntimeFailure, StreamParser } from './coding-cli-kit';
import type { RunMeter, UsageSnapshot } from './run-meter';

/** how often a parser with a side channel (a session file, an endpoint probe) is asked for usage */
const POLL_MS = 500;
/** at most one usage snapshot per this many ms while lines stream in */
const REPORT_MS = 50;
/** after the CLI's final result, a process that lingers this long is terminated */
const LINGER_SEC = 3;
/** SIGTERM to SIGKILL when the runtime stops a run */
export const STOP_GRACE_SEC = 1;

/** Failures that end the run at once (the CLI would otherwise retry for minutes). */
const stopsRun = (code: string) => code === 'runtime_endpoint_unreachable' || code === 'runtime_auth_failed';

/** How one attempt (one CLI process) ended. */
export interface AttemptResult {
  outcome: RunOutcome;
  parser: StreamParser;
  stderr: string;
  /** why the runtime itself stopped it (an idle stream, a failure the CLI would retry), if it did */
  end: RuntimeFailure | null;
  /** it was stopped for lingering after its final result */
  lingered: boolean;
}

/** The timers of one attempt: each is registered here, unreferenced, and all are cleared when the attempt ends. */
export class AttemptTimers {
  private readonly all = new Set<NodeJS.Timeout>();

  after(ms: number, fn: () => void): NodeJS.Timeout {
    const t = setTimeout(() => {
      this.all.delete(t);
      fn();
    }, ms);
    return this.keep(t);
  }

  every(ms: number, fn: () => void): NodeJS.Timeout {
    return this.keep(setInterval(fn, ms));
  }

  cancel(t: NodeJS.Timeout | null): void {
    if (!t) return;
    clearTimeout(t);
    this.all.delete(t);
  }

  clear(): void {
    this.all.forEach((t) => clearTimeout(t));
    this.all.clear();
  }

  private keep(t: NodeJS.Timeout): NodeJS.Timeout {
    t.unref();
    this.all.add(t);
    return t;
  }
}

/**
 * The usage reports of one attempt: one per model call, but a burst of stream lines is joined (one
 * snapshot per REPORT_MS, the first at once), and totals that did not change are not sent again.
 */
export class UsageReporter {
  private lastAt = 0;
  private pending: NodeJS.Timeout | null = null;
  private sent = '';

  constructor(
    private readonly timers: AttemptTimers,
    private readonly meter: RunMeter,
    private readonly send: (s: UsageSnapshot) => void,
  ) {}

  report(force = false): void {
    const now = Date.now();
    if (!force && now - this.lastAt < REPORT_MS) {
      this.pending ??= this.timers.after(REPORT_MS - (now - this.lastAt), () => {
        this.pending = null;
        this.report(true);
      });
      return;
    }
    this.timers.cancel(this.pending);
    this.pending = null;
    this.lastAt = now;
    const snap = this.meter.snapshot();
    const key = `${snap.turns}:${snap.totalTokens}:${snap.costUsd}:${snap.final}`;
    if (key === this.sent) return;
    this.sent = key;
    this.send(snap);
  }

  /** The joined burst still waiting goes out now. */
  flush(): void {
    if (this.pending) this.report(true);
  }
}

/** The process of an attempt, as runChild takes it (the attempt adds the log and the line handler). */
export type AttemptProcess = Omit<ChildRunOptions, 'log' | 'onStdoutLine' | 'onSpawn' | 'runAs' | 'sandbox'>;

/**
 * One CLI process of a run: feeds its stream to the parser, reports the meter's usage, and stops it
 * on a failure the CLI would only retry (auth, endpoint), after `idleSec` without output, and when
 * it lingers after its final result.
 */
export class CliAttempt {
  private stderr = '';
  private end: RuntimeFailure | null = null;
  private lingered = false;
  private lingering = false;
  private lastOutput = Date.now();
  private readonly timers = new AttemptTimers();
  private readonly reporter: UsageReporter;
  private handle: AdapterRun | null = null;
  /** stdout lines kept for the log, not yet written (keepInLog) */
  private kept = '';

  constructor(
    private readonly parser: StreamParser,
    private readonly meter: RunMeter,
    private readonly ctx: AdapterRunContext,
    private readonly idleSec: number,
    usage: (s: UsageSnapshot) => Record<string, unknown>,
  ) {
    this.reporter = new UsageReporter(this.timers, meter, (s) => ctx.onUsage?.(usage(s)));
  }

  /** Starts the process; its handle cancels it. */
  start(p: AttemptProcess): AdapterRun {
    const ctx = this.ctx;
    const handle = runChild({
      ...p,
      runAs: ctx.runAs,
      sandbox: ctx.sandbox,
      onSpawn: ctx.onProcessStarted,
      log: (stream, chunk) => this.output(stream, chunk),
      onStdoutLine: (line) => this.line(line),
    });
    this.handle = handle;
    this.parser.onUpdate = () => {
      this.reporter.report();
      this.stopOnFailure();
    };
    if (this.parser.poll) this.timers.every(POLL_MS, () => this.poll());
    if (this.idleSec > 0) this.timers.every(Math.min(1000, this.idleSec * 250), () => this.checkIdle());
    return handle;
  }

  /** Resolves when the process has ended and the CLI's last records are read. */
  async done(): Promise<AttemptResult> {
    const outcome = await this.handle!.done;
    this.flushKept();
    this.timers.clear();
    this.parser.poll?.();
    this.parser.close?.();
    this.parser.onUpdate = null;
    this.reporter.flush();
    this.meter.flushTurns();
    return { outcome, parser: this.parser, stderr: this.stderr, end: this.end, lingered: this.lingered };
  }

  private output(stream: 'stdout' | 'stderr' | 'system', chunk: string): void {
    this.lastOutput = Date.now();
    if (stream === 'stderr') this.stderr = (this.stderr + chunk).slice(-8_000);
    if (stream === 'stdout' && this.parser.keepInLog) return; // logged by line()
    this.ctx.log(stream, chunk);
  }

  private line(line: string): void {
    if (this.parser.keepInLog?.(line)) this.keep(line);
    this.parser.accept(line);
    this.reporter.report(this.parser.finished);
    this.stopOnFailure();
    if (this.parser.finished && !this.lingering) {
      this.lingering = true;
      this.timers.after(LINGER_SEC * 1000, () => {
        this.lingered = true;
        this.handle?.cancel('the CLI lingered after its final result', STOP_GRACE_SEC);
      });
    }
  }

  /** Lines kept for the log go out together, once per chunk of output (one write, not one per line). */
  private keep(line: string): void {
    const first = this.kept === '';
    this.kept += `${line}\n`;
    if (first) queueMicrotask(() => this.flushKept());
  }

  private flushKept(): void {
    if (this.kept === '') return;
    const text = this.kept;
    this.kept = '';
    this.ctx.log('stdout', text);
  }

  /** Usage and failures the CLI records outside its stream (a session file, a dead endpoint it retries silently). */
  private poll(): void {
    this.parser.poll?.();
    this.reporter.report();
    this.stopOnFailure();
  }

  private checkIdle(): void {
    if (Date.now() - this.lastOutput < this.idleSec * 1000 || this.end) return;
    this.stop({ code: 'runtime_idle_timeout', message: `no output for ${this.idleSec}s` });
  }

  private stopOnFailure(): void {
    const failure = this.parser.failure;
    if (failure && !this.end && stopsRun(failure.code)) this.stop(failure);
  }

  private stop(why: RuntimeFailure): void {
    this.end = why;
    this.handle?.cancel(why.message, STOP_GRACE_SEC);
  }
}
