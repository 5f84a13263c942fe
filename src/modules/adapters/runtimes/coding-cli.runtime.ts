import { createHash } from 'node:crypto';
import { readAsOwner } from '../../../common/fs/agent-home';
import * as os from 'node:os';
import type { RunOutcome } from '../run.types';
import type { AdapterDescription, AdapterExecutor, AdapterRun, AdapterRunContext, EnvironmentReport } from '../adapter.types';
import { baseChildEnv, buildPrompt, DEFAULT_GRACE_SEC, num, str, strArray } from '../executor-kit';
import { CliAttempt, type AttemptResult } from './cli-attempt';
import { runTurn } from '../../../common/tracing/run-tracing';
import { tracing } from '../../../common/tracing/tracing';
import { parsePriceTable } from './model-prices';
import { RunMeter, type UsageSnapshot } from './run-meter';
import { environmentReport, HELLO_PROMPT, type HelloResult } from './runtime-environment';
import { helloContext, helloResult, type HelloRequest } from './hello-probe';
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

/** A run's session as it starts: the one to resume (or null) and why not, when it is not resumed. */
interface SessionStart {
  resume: string | null;
  note: string | null;
}

/** How a run's attempts are told to stop (a cancel arrives before or while an attempt runs). */
interface StopControl {
  stopped: { reason: string; graceSec?: number } | null;
  current: AdapterRun | null;
}

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

  private described: AdapterDescription | null = null;

  /** The CLI's spec says it all: its label, its config fields beyond the shared ones, its provider as traces name it. */
  get description(): AdapterDescription {
    this.described ??= {
      label: this.spec.label,
      configSchema: { type: 'object', properties: { ...CODING_CLI_FIELDS, ...this.spec.extraSchema } },
      // the run's skills folder is copied where the CLI reads skills (deliver), for the run only
      skills: 'ephemeral',
      genAiSystem: this.spec.genAiSystem,
    };
    return this.described;
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
        fileText = readAsOwner(ctx.runAs, instructionsFile);
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
    const control: StopControl = { stopped: null, current: null };
    const cancel = (reason: string, graceSec?: number) => {
      control.stopped ??= { reason, graceSec };
      control.current?.cancel(reason, graceSec);
    };
    return { done: this.execute(ctx, control), cancel };
  }

  /**
   * The environment test's prompt: one short model call through the CLI as the agent's runs make it
   * (this runtime's invocation, files and parser, the form's env, the run's identity), without the
   * agent's instructions, skills or tools. Says what went wrong (null: it answered) and what the
   * call used.
   */
  async hello(r: HelloRequest): Promise<HelloResult> {
    const output = { stderr: '' };
    const ctx = { ...helloContext(r, output), adapterType: this.type };
    const outcome = await this.execute(ctx, { stopped: null, current: null }, HELLO_PROMPT);
    return helloResult(outcome, r.env, output.stderr);
  }

  /** Prepares the run, delivers the CLI's files, runs its attempts and cleans up. `prompt` replaces the agent's (the test prompt). */
  private async execute(ctx: AdapterRunContext, control: StopControl, prompt?: string): Promise<RunOutcome> {
    const run = this.prepare(ctx);
    if (prompt) run.prompt = prompt;
    const meter = this.meter(run);
    let cleanup: () => void = () => undefined;
    try {
      cleanup = this.deliver(run);
      return await this.attempts(run, meter, this.session(run), control);
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
  }

  /** The run's usage ledger; each model turn it meters becomes a span of the run's trace (only when tracing is on). */
  private meter(run: PreparedRun): RunMeter {
    const { ctx, config } = run;
    const meter = new RunMeter(this.spec.provider, this.spec.provider, run.model, parsePriceTable(config.modelPrices));
    if (tracing())
      meter.onTurn = (turn) =>
        runTurn(
          { id: ctx.runId, companyId: ctx.companyId, agentId: ctx.agentId, adapterType: this.spec.type },
          { ...turn, system: this.spec.provider },
        );
    return meter;
  }

  /** Resumes the last session while what shapes it is unchanged; otherwise a fresh one, saying why. */
  private session(run: PreparedRun): SessionStart {
    const { ctx } = run;
    const resume = ctx.resumeSessionId;
    if (!resume) return { resume: null, note: ctx.context.forceFreshSession ? 'fresh session requested' : 'no session to resume' };
    const changed = shapeChanges(ctx.resumeSessionShape, run.sessionShape);
    if (!changed.length) return { resume, note: null };
    const note = `fresh session: the ${changed.join(' and ')} changed since session ${resume}`;
    this.sessionEvent(run, note, { fresh: true, changed, previousSessionId: resume });
    delete run.env.SERVICE_RESUME_SESSION_ID;
    return { resume: null, note };
  }

  /** Runs the CLI; a resume the CLI does not know falls back to a fresh session, once. */
  private async attempts(run: PreparedRun, meter: RunMeter, session: SessionStart, control: StopControl): Promise<RunOutcome> {
    let { resume, note } = session;
    for (;;) {
      const a = await this.attempt(run, meter, resume, (h) => {
        control.current = h;
        if (control.stopped) h.cancel(control.stopped.reason, control.stopped.graceSec);
      });
      if (!resume || control.stopped || a.outcome.status !== 'failed' || !this.unknownSession(a.parser, a.stderr))
        return this.outcome(a, meter, run, resume, note);
      note = `session ${resume} was unknown to the CLI; started a fresh session`;
      this.sessionEvent(run, note, { fresh: true, unknownSessionId: resume });
      meter.endAttempt();
      resume = null;
    }
  }

  /** Why the run does not continue its session: in the run log and on the run's live events. */
  private sessionEvent(run: PreparedRun, note: string, payload: Record<string, unknown>): void {
    run.ctx.log('system', `${note}\n`);
    run.ctx.onEvent?.('session', note, payload);
  }

  /** One CLI process (CliAttempt: its stream, usage reports, idle and linger deadlines). */
  private attempt(run: PreparedRun, meter: RunMeter, resume: string | null, started: (h: AdapterRun) => void): Promise<AttemptResult> {
    const c = run.config;
    const idleSec = c.idleTimeoutSec === undefined ? DEFAULT_IDLE_TIMEOUT_SEC : num(c.idleTimeoutSec, DEFAULT_IDLE_TIMEOUT_SEC);
    const attempt = new CliAttempt(this.parser(meter, run, resume), meter, run.ctx, idleSec, (s) => this.usageRecord(s, run.ctx));
    started(
      attempt.start({
        command: cliCommand(str(c.command) ?? this.spec.defaultCommand, this.host.cliPath, run.env.PATH),
        args: [...this.args(run, resume), ...strArray(c.extraArgs)],
        cwd: run.cwd,
        env: run.env,
        stdin: this.stdin(run),
        timeoutSec: num(c.timeoutSec, 0),
        graceSec: num(c.graceSec, DEFAULT_GRACE_SEC),
      }),
    );
    return attempt.done();
  }

  private outcome(a: AttemptResult, meter: RunMeter, run: PreparedRun, resumed: string | null, sessionNote: string | null): RunOutcome {
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

const lastLine = (s: string) =>
  s
    .trim()
    .split('\n')
    .filter((l) => l.trim())
    .slice(-1)[0]
    ?.slice(0, 500) ?? '';
