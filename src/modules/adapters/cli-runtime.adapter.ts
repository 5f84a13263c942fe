import type { RunOutcome } from './run.types';
import type { AdapterExecutor, AdapterRun, AdapterRunContext, EnvironmentReport } from './adapter.types';
import {
  baseChildEnv,
  buildPrompt,
  commandCheck,
  DEFAULT_GRACE_SEC,
  num,
  runChild,
  str,
  strArray,
  validateEnv,
  validateTimeouts,
} from './executor-kit';

export interface CliRuntimeDefaults {
  type: string;
  command: string;
  model: string;
}

/** The local CLI runtimes: same protocol, different default binaries and models. */
export const CLI_RUNTIMES: CliRuntimeDefaults[] = [
  { type: 'runtime_a_local', command: 'runtime-a', model: 'runtime-a-default' },
  { type: 'runtime_b_local', command: 'runtime-b', model: 'runtime-b-default' },
  { type: 'runtime_c_local', command: 'runtime-c', model: 'runtime-c-default' },
  { type: 'runtime_d_local', command: 'runtime-d', model: 'runtime-d-default' },
  { type: 'runtime_e_local', command: 'runtime-e', model: 'runtime-e-default' },
  { type: 'runtime_f_local', command: 'runtime-f', model: 'runtime-f-default' },
  { type: 'runtime_g', command: 'runtime-g', model: 'runtime-g-default' },
];

const numbers = (v: unknown): Record<string, number> => {
  const out: Record<string, number> = {};
  if (v && typeof v === 'object' && !Array.isArray(v))
    for (const [k, x] of Object.entries(v as Record<string, unknown>)) if (typeof x === 'number') out[k] = x;
  return out;
};

/**
 * Reads usage, session id and a final summary out of JSON-lines output, when present. Usage lines
 * are per model call (repeats of one call, same message id, count once) until a final line
 * (`type: "result"` or `final: true`): its usage is the run's total and replaces the per-call sum,
 * it is never added to it.
 */
export class JsonLinesReport {
  sessionId: string | null = null;
  summary: string | null = null;
  private readonly perCall = new Map<string, Record<string, number>>();
  private anonymous: Record<string, number> = {};
  private finalUsage: Record<string, number> | null = null;
  private costs: Record<string, number> = {};

  get usage(): Record<string, number> {
    let sum: Record<string, number> = { ...this.anonymous };
    for (const u of this.perCall.values()) for (const [k, v] of Object.entries(u)) sum[k] = (sum[k] ?? 0) + v;
    if (this.finalUsage) sum = { ...this.finalUsage };
    return { ...sum, ...this.costs };
  }

  accept(line: string): void {
    const t = line.trim();
    if (!t.startsWith('{')) return;
    let o: Record<string, unknown>;
    try {
      o = JSON.parse(t) as Record<string, unknown>;
    } catch {
      return;
    }
    const sid = o.session_id ?? o.sessionId;
    if (typeof sid === 'string') this.sessionId = sid;
    const message = o.message && typeof o.message === 'object' ? (o.message as Record<string, unknown>) : null;
    const usage = o.usage ?? message?.usage;
    if (usage && typeof usage === 'object') {
      if (o.type === 'result' || o.final === true) this.finalUsage = numbers(usage);
      else {
        const id = message?.id ?? o.id;
        if (typeof id === 'string') this.perCall.set(id, { ...(this.perCall.get(id) ?? {}), ...numbers(usage) });
        else for (const [k, v] of Object.entries(numbers(usage))) this.anonymous[k] = (this.anonymous[k] ?? 0) + v;
      }
    }
    for (const k of ['total_cost_usd', 'costUsd', 'costCents']) {
      if (typeof o[k] === 'number') this.costs[k] = o[k] as number;
    }
    if (typeof o.result === 'string') this.summary = o.result.slice(0, 20_000);
  }

  apply(o: RunOutcome): RunOutcome {
    const result: Record<string, unknown> = { ...(o.result ?? {}) };
    if (this.sessionId) result.sessionId = this.sessionId;
    if (this.summary) result.summary = this.summary;
    const usage = this.usage;
    return {
      ...o,
      usage: Object.keys(usage).length ? usage : (o.usage ?? null),
      result: Object.keys(result).length ? result : (o.result ?? null),
    };
  }
}

/**
 * A local CLI runtime: `command` (per-type default) with `--model <model>` and `args`, the prompt on
 * stdin, JSON-lines output parsed for usage and session id. A missing CLI fails the run with
 * `adapter_command_not_found` at once.
 */
export class CliRuntimeAdapter implements AdapterExecutor {
  readonly type: string;
  readonly configSchema: Record<string, unknown>;

  constructor(private readonly defaults: CliRuntimeDefaults) {
    this.type = defaults.type;
    this.configSchema = {
      type: 'object',
      properties: {
        command: { type: 'string', default: defaults.command },
        model: { type: 'string', default: defaults.model },
        modelArg: { type: 'string', default: '--model', description: 'flag that passes the model; empty string to omit' },
        resumeArg: { type: 'string', description: 'flag that resumes the last session (e.g. --resume); omitted: never resume' },
        args: { type: 'array', items: { type: 'string' } },
        cwd: { type: 'string' },
        env: { type: 'object' },
        instructions: { type: 'string', description: 'agent instructions placed first in the prompt' },
        timeoutSec: { type: 'number', minimum: 0, default: 0 },
        graceSec: { type: 'number', minimum: 0, default: DEFAULT_GRACE_SEC },
      },
    };
  }

  validateConfig(c: Record<string, unknown>): string[] {
    const errors: string[] = [];
    for (const k of ['command', 'model', 'modelArg', 'resumeArg', 'cwd', 'instructions']) {
      if (c[k] !== undefined && typeof c[k] !== 'string') errors.push(`${k} must be a string`);
    }
    if (c.args !== undefined && (!Array.isArray(c.args) || c.args.some((a) => typeof a !== 'string')))
      errors.push('args must be an array of strings');
    return [...errors, ...validateEnv(c.env), ...validateTimeouts(c)];
  }

  start(ctx: AdapterRunContext): AdapterRun {
    const c = ctx.config;
    const model = str(c.model) ?? this.defaults.model;
    const modelArg = typeof c.modelArg === 'string' ? c.modelArg : '--model';
    const report = new JsonLinesReport();
    const run = runChild({
      command: str(c.command) ?? this.defaults.command,
      args: [
        ...(modelArg ? [modelArg, model] : []),
        ...(str(c.resumeArg) && ctx.resumeSessionId ? [String(c.resumeArg), ctx.resumeSessionId] : []),
        ...strArray(c.args),
      ],
      cwd: str(c.cwd),
      env: { ...baseChildEnv(), ...ctx.configEnv, ...ctx.serviceEnv },
      stdin: buildPrompt(ctx),
      timeoutSec: num(c.timeoutSec, 0),
      graceSec: num(c.graceSec, DEFAULT_GRACE_SEC),
      log: ctx.log,
      runAs: ctx.runAs,
      sandbox: ctx.sandbox,
      onSpawn: ctx.onProcessStarted,
      onStdoutLine: (line) => report.accept(line),
    });
    return { done: run.done.then((o) => report.apply(o)), cancel: run.cancel };
  }

  async testEnvironment(c: Record<string, unknown>): Promise<EnvironmentReport> {
    const checks = [commandCheck(str(c.command) ?? this.defaults.command)];
    return { ok: checks.every((x) => x.ok), checks };
  }
}
