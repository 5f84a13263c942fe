import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import type { RunOutcome } from '../run.types';
import type { AdapterExecutor, AdapterRun, AdapterRunContext, EnvironmentReport } from '../adapter.types';
import { num, str, strArray } from '../adapter.types';
import { buildPrompt } from '../cli-runtime.adapter';
import { baseChildEnv, runChild } from '../child-process-run';
import { DEFAULT_GRACE_SEC } from '../process.adapter';
import { runTurn } from '../../../common/tracing/run-tracing';
import { tracing } from '../../../common/tracing/tracing';
import { parsePriceTable } from './model-prices';
import { RunMeter, type UsageSnapshot } from './run-meter';
import { environmentReport } from './runtime-environment';
import {
  agentCannotRead,
  CODING_CLI_FIELDS,
  DEFAULT_IDLE_TIMEOUT_SEC,
  shapeChanges,
  validateShared,
  type CliSpec,
  type PreparedRun,
  type RuntimeFailure,
  type StreamParser,
} from './coding-cli-kit';
import { cliCommand } from './cli-command';
import type { OutboundTarget } from '../../../common/net/outbound-guard';

// what others import from here (their CLI's parts come from the kit)
export type { RuntimeFailure, StreamParser, PreparedRun, CliSpec } from './coding-cli-kit';

/** Stop reasons the runtime itself decides (the heartbeat engine adds caps and budgets). */
type EndReason = { code: string; message: string } | null;

/** how often a parser with a side channel (Codex's session file) is asked for usage */
const POLL_MS = 500;
/** after the CLI's final result, a process that lingers this long is terminated */
/** at most one usage snapshot per this many ms while lines stream in */
const REPORT_MS = 50;
const LINGER_SEC = 3;
/** SIGTERM to SIGKILL when the runtime or a cap stops a run (caps must act within 2 s) */
export const STOP_GRACE_SEC = 1;

/**
 * A coding-agent CLI as a runtime: builds its non-interactive invocation, reads its event stream into
 * a usage ledger (live, per turn), keeps its session, and classifies how it ended. The subclass
 * knows its CLI: arguments, parser, where it reads instructions and skills.
 */
export abstract class CodingCliRuntime implements AdapterExecutor {
  abstract readonly spec: CliSpec;
  /** SERVICE_CLI_PATH (searched for a bare command name before PATH) and the environment test's destination policy */
  host: { cliPath: readonly string[]; outbound?: OutboundTarget; trustedEndpoints?: string[] } = { cliPath: [] };

  get type(): string {
    return this.spec.type;
  }

  get configSchema(): Record<string, unknown> {
    return { type: 'object', properties: { ...CODING_CLI_FIELDS, ...this.spec.extraSchema } };
  }

  /** The CLI's arguments for one attempt (`resume`: the session to continue, or null for a fresh one). */
  protected abstract args(run: PreparedRun, resume: string | null): string[];
  protected abstract parser(meter: RunMeter, run: PreparedRun, resume: string | null): StreamParser;
  /** Variables the CLI needs beyond the agent's env (telemetry off, config locations). */
  protected cliEnv(_run: PreparedRun): Record<string, string> {
    return {};
  }
  /** Files the CLI reads (instructions, skills, its config) for this run; returns their clean-up. */
  protected deliver(_run: PreparedRun): () => void {
    return () => undefined;
  }
  /** What goes to the CLI's stdin (the prompt by default). */
  protected stdin(run: PreparedRun): string | undefined {
    return run.prompt;
  }
  /** Does this failed attempt say that the resumed session does not exist (any more)? */
  protected abstract unknownSession(parser: StreamParser, stderr: string): boolean;
  /** A failure recognised from stderr and the exit (auth, endpoint, …), when the stream said nothing. */
  protected classifyStderr(stderr: string): RuntimeFailure | null {
    if (/\b(401|unauthori[sz]ed|invalid api key|authentication|not logged in|api key)/i.test(stderr))
      return { code: 'runtime_auth_failed', message: lastLine(stderr) };
    if (/ECONNREFUSED|ENOTFOUND|ECONNRESET|ETIMEDOUT|connection refused|fetch failed|network error/i.test(stderr))
      return { code: 'runtime_endpoint_unreachable', message: lastLine(stderr) };
    return null;
  }

  /** The model the CLI uses when none is configured: the type's instance env, else the CLI's own settings in its home. */
  detectModel(home: string, instanceConfig: Record<string, unknown>): { model: string; source: string } | null {
    const env = instanceConfig.env && typeof instanceConfig.env === 'object' ? (instanceConfig.env as Record<string, unknown>) : {};
    const fromEnv = this.spec.modelEnv ? env[this.spec.modelEnv] : undefined;
    if (typeof fromEnv === 'string' && fromEnv) return { model: fromEnv, source: 'instance_config' };
    const fromSettings = this.settingsModel(home);
    return fromSettings ? { model: fromSettings, source: 'cli_settings' } : null;
  }

  /** The default model in the CLI's settings files under `home`. */
  protected settingsModel(_home: string): string | null {
    return null;
  }

  validateConfig(c: Record<string, unknown>): string[] {
    return validateShared(c, this.spec.extraSchema);
  }

  testEnvironment(c: Record<string, unknown>): Promise<EnvironmentReport> {
    return environmentReport(this.spec, c, {}, undefined, this.host).then((r) => ({
      ok: r.status !== 'fail',
      checks: r.checks.map((x) => ({ name: x.code, ok: x.level !== 'error', message: x.message })),
    }));
  }

  protected prepare(ctx: AdapterRunContext): PreparedRun {
    const c = ctx.config;
    const home = ctx.runAs?.home ?? process.env.HOME ?? os.homedir();
    const instructionsFile = str(c.instructionsFilePath);
    let fileText: string | null = null;
    if (instructionsFile) {
      // read for the agent: only what its own user may read (the service may be root)
      const denied = agentCannotRead(instructionsFile, ctx);
      try {
        if (denied) throw new Error(denied);
        fileText = fs.readFileSync(instructionsFile, 'utf8');
      } catch (err) {
        ctx.log('system', `instructions file ${instructionsFile} not readable: ${(err as Error).message}\n`);
      }
    }
    const instructions = [str(c.promptTemplate), str(c.instructions), fileText].filter((x): x is string => !!x).join('\n\n') || null;
    const env: Record<string, string> = { ...baseChildEnv(), ...ctx.configEnv, ...ctx.serviceEnv, HOME: home };
    const cwd = ctx.workspaceCwd ?? str(c.cwd) ?? home;
    const model = str(c.model) ?? this.spec.defaultModel;
    const run: PreparedRun = {
      ctx,
      config: c,
      home,
      cwd,
      model,
      prompt: buildPrompt({ ...ctx, config: { ...c, promptTemplate: undefined, instructions: undefined } }),
      instructions,
      skillsDir: env.SERVICE_SKILLS_DIR ?? null,
      env,
      sessionShape: {
        adapterType: this.spec.type,
        model,
        instructions: instructions ? createHash('sha256').update(instructions).digest('hex').slice(0, 16) : null,
        cwd,
      },
    };
    run.env = { ...this.cliEnv(run), ...run.env };
    return run;
  }

  start(ctx: AdapterRunContext): AdapterRun {
    let current: AdapterRun | null = null;
    let stopped: { reason: string; graceSec?: number } | null = null;
    const cancel = (reason: string, graceSec?: number) => {
      stopped ??= { reason, graceSec };
      current?.cancel(reason, graceSec);
    };
    const done = (async (): Promise<RunOutcome> => {
      const run = this.prepare(ctx);
      const c = run.config;
      const meter = new RunMeter(this.spec.provider, this.spec.provider, run.model, parsePriceTable(c.modelPrices));
      // each model turn the CLI reports becomes a span of the run's trace (only when tracing is on)
      if (tracing())
        meter.onTurn = (turn) =>
          runTurn(
            { id: ctx.runId, company_id: ctx.companyId, agent_id: ctx.agentId, adapter_type: this.spec.type },
            { ...turn, system: this.spec.provider },
          );
      let cleanup: () => void = () => undefined;
      try {
        cleanup = this.deliver(run);
        let resume = ctx.resumeSessionId;
        let sessionNote: string | null = resume ? null : ctx.context.forceFreshSession ? 'fresh session requested' : 'no session to resume';
        const changed = resume ? shapeChanges(ctx.resumeSessionShape, run.sessionShape) : [];
        if (resume && changed.length) {
          sessionNote = `fresh session: the ${changed.join(' and ')} changed since session ${resume}`;
          this.sessionEvent(run, sessionNote, { fresh: true, changed, previousSessionId: resume });
          delete run.env.SERVICE_RESUME_SESSION_ID;
          resume = null;
        }
        for (;;) {
          const attempt = this.attempt(run, meter, resume, (h) => {
            current = h;
            if (stopped) h.cancel(stopped.reason, stopped.graceSec);
          });
          const a = await attempt;
          if (resume && !stopped && a.outcome.status === 'failed' && this.unknownSession(a.parser, a.stderr)) {
            sessionNote = `session ${resume} was unknown to the CLI; started a fresh session`;
            this.sessionEvent(run, sessionNote, { fresh: true, unknownSessionId: resume });
            meter.endAttempt();
            resume = null;
            continue;
          }
          return this.outcome(a, meter, run, resume, sessionNote);
        }
      } catch (err) {
        return {
          status: 'failed',
          errorCode: 'adapter_error',
          error: (err as Error).message,
          usage: this.usageRecord(meter.snapshot(), ctx),
        };
      } finally {
        try {
          cleanup();
        } catch (err) {
          ctx.log('system', `clean-up failed: ${(err as Error).message}\n`);
        }
      }
    })();
    return { done, cancel };
  }

  /** Why the run does not continue its session: in the run log and on the run's live events. */
  private sessionEvent(run: PreparedRun, note: string, payload: Record<string, unknown>): void {
    run.ctx.log('system', `${note}\n`);
    run.ctx.onEvent?.('session', note, payload);
  }

  private async attempt(
    run: PreparedRun,
    meter: RunMeter,
    resume: string | null,
    started: (h: AdapterRun) => void,
  ): Promise<{ outcome: RunOutcome; parser: StreamParser; stderr: string; end: EndReason; lingered: boolean }> {
    const { ctx, config: c } = run;
    const parser = this.parser(meter, run, resume);
    let stderr = '';
    let end: EndReason = null;
    let lingered = false;
    let lastOutput = Date.now();
    let reported = '';
    let lingerSet = false;
    const timers: NodeJS.Timeout[] = [];
    // usage goes out per model turn; a burst of stream lines is joined (one snapshot per REPORT_MS)
    let lastReportAt = 0;
    let reportTimer: NodeJS.Timeout | null = null;
    const report = (force = false) => {
      const now = Date.now();
      if (!force && now - lastReportAt < REPORT_MS) {
        reportTimer ??= setTimeout(() => report(true), REPORT_MS - (now - lastReportAt));
        return;
      }
      if (reportTimer) clearTimeout(reportTimer);
      reportTimer = null;
      lastReportAt = now;
      const snap = meter.snapshot();
      const key = `${snap.turns}:${snap.totalTokens}:${snap.costUsd}:${snap.final}`;
      if (key === reported) return;
      reported = key;
      ctx.onUsage?.(this.usageRecord(snap, ctx));
    };
    const handle = runChild({
      command: cliCommand(str(c.command) ?? this.spec.defaultCommand, this.host.cliPath, run.env.PATH),
      args: [...this.args(run, resume), ...strArray(c.extraArgs)],
      cwd: run.cwd,
      env: run.env,
      stdin: this.stdin(run),
      timeoutSec: num(c.timeoutSec, 0),
      graceSec: num(c.graceSec, DEFAULT_GRACE_SEC),
      log: (stream, chunk) => {
        lastOutput = Date.now();
        if (stream === 'stderr') stderr = (stderr + chunk).slice(-8_000);
        ctx.log(stream, chunk);
      },
      runAs: ctx.runAs,
      sandbox: ctx.sandbox,
      onSpawn: ctx.onProcessStarted,
      onStdoutLine: (line) => {
        parser.accept(line);
        report(parser.finished);
        if (parser.failure && !end && stopsRun(parser.failure.code)) {
          end = parser.failure;
          handle.cancel(parser.failure.message, STOP_GRACE_SEC);
        }
        if (parser.finished && !lingerSet) {
          lingerSet = true;
          const t = setTimeout(() => {
            lingered = true;
            handle.cancel('the CLI lingered after its final result', STOP_GRACE_SEC);
          }, LINGER_SEC * 1000);
          t.unref();
          timers.push(t);
        }
      },
    });
    started(handle);
    const stopOnFailure = () => {
      if (parser.failure && !end && stopsRun(parser.failure.code)) {
        end = parser.failure;
        handle.cancel(parser.failure.message, STOP_GRACE_SEC);
      }
    };
    parser.onUpdate = () => {
      report();
      stopOnFailure();
    };
    if (parser.poll) {
      const t = setInterval(() => {
        parser.poll?.();
        report();
        // a failure found outside the stream (a dead endpoint the CLI retries silently) ends the run too
        if (parser.failure && !end && stopsRun(parser.failure.code)) {
          end = parser.failure;
          handle.cancel(parser.failure.message, STOP_GRACE_SEC);
        }
      }, POLL_MS);
      t.unref();
      timers.push(t);
    }
    const idleSec = c.idleTimeoutSec === undefined ? DEFAULT_IDLE_TIMEOUT_SEC : num(c.idleTimeoutSec, DEFAULT_IDLE_TIMEOUT_SEC);
    if (idleSec > 0) {
      const t = setInterval(
        () => {
          if (Date.now() - lastOutput < idleSec * 1000 || end) return;
          end = { code: 'runtime_idle_timeout', message: `no output for ${idleSec}s` };
          handle.cancel(end.message, STOP_GRACE_SEC);
        },
        Math.min(1000, idleSec * 250),
      );
      t.unref();
      timers.push(t);
    }
    const outcome = await handle.done;
    timers.forEach((t) => clearTimeout(t));
    parser.poll?.();
    parser.close?.();
    parser.onUpdate = null;
    if (reportTimer) report(true);
    meter.flushTurns();
    return { outcome, parser, stderr, end, lingered };
  }

  private outcome(
    a: { outcome: RunOutcome; parser: StreamParser; stderr: string; end: EndReason; lingered: boolean },
    meter: RunMeter,
    run: PreparedRun,
    resumed: string | null,
    sessionNote: string | null,
  ): RunOutcome {
    const { parser } = a;
    const result: Record<string, unknown> = { ...(a.outcome.result ?? {}) };
    const sessionId = parser.sessionId ?? resumed;
    if (sessionId) result.sessionId = sessionId;
    result.sessionResumed = !!resumed && (!parser.sessionId || parser.sessionId === resumed);
    if (sessionNote) result.sessionNote = sessionNote;
    result.sessionShape = run.sessionShape;
    if (parser.sessionTotals) result.sessionTotals = parser.sessionTotals;
    if (parser.summary) result.summary = parser.summary;
    if (run.model) result.model = run.model;
    const usage = this.usageRecord(meter.snapshot(), run.ctx);
    let o: RunOutcome = { ...a.outcome, usage, result };
    const failure = a.end ?? parser.failure ?? (a.outcome.status === 'failed' ? this.classifyStderr(a.stderr) : null);
    if (parser.finished && !parser.failure && (a.outcome.status === 'succeeded' || a.lingered)) {
      o = { ...o, status: 'succeeded', errorCode: null, error: null, exitCode: a.outcome.exitCode ?? 0 };
    } else if (failure && a.outcome.status !== 'timed_out' && (a.end || a.outcome.status !== 'cancelled')) {
      o = { ...o, status: 'failed', errorCode: failure.code, error: failure.message };
    } else if (a.outcome.status === 'succeeded' && !parser.finished) {
      o = { ...o, status: 'failed', errorCode: 'runtime_no_result', error: 'the CLI exited without a final result' };
    }
    return o;
  }

  /** The run's usage record: the meter's snapshot plus what cost booking attributes it to. */
  protected usageRecord(s: UsageSnapshot, ctx: AdapterRunContext): Record<string, unknown> {
    return {
      ...s,
      // cost events carry input (uncached, cache writes included), cached input and output tokens
      bookedInputTokens: s.inputTokens + s.cacheCreationInputTokens,
      projectId: ctx.projectId ?? null,
      runtime: this.spec.type,
    };
  }
}

/** Failures that end the run at once (the CLI would otherwise retry for minutes). */
const stopsRun = (code: string) => code === 'runtime_endpoint_unreachable' || code === 'runtime_auth_failed';

const lastLine = (s: string) =>
  s
    .trim()
    .split('\n')
    .filter((l) => l.trim())
    .slice(-1)[0]
    ?.slice(0, 500) ?? '';
