import type { RunOutcome } from './run.types';
import { COMMON_CONFIG_FIELDS, type ConfigFieldSchema } from './adapter-config-schema';
import type { AdapterDescription, AdapterExecutor, AdapterRun, AdapterRunContext, EnvironmentReport } from './adapter.types';
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
  /** the spec's placeholder letter: its label is "Generic JSON-lines CLI <letter> (spec placeholder)" */
  letter: string;
  command: string;
  model: string;
  /** the model is filled in when an agent is created without one */
  modelOnCreate?: boolean;
  /** runtime_g: a remote-capable variant (model, url, cwd) */
  remote?: boolean;
}

/**
 * The local CLI runtimes: same protocol, different default binaries and models. These are the
 * spec's placeholder names (runtime_a … runtime_g): a generic JSON-lines CLI protocol
 * (docs/runtimes.md), not a product.
 */
export const CLI_RUNTIMES: CliRuntimeDefaults[] = [
  { type: 'runtime_a_local', letter: 'A', command: 'runtime-a', model: 'runtime-a-default', modelOnCreate: true },
  { type: 'runtime_b_local', letter: 'B', command: 'runtime-b', model: 'runtime-b-default', modelOnCreate: true },
  { type: 'runtime_c_local', letter: 'C', command: 'runtime-c', model: 'runtime-c-default', modelOnCreate: true },
  { type: 'runtime_d_local', letter: 'D', command: 'runtime-d', model: 'runtime-d-default' },
  { type: 'runtime_e_local', letter: 'E', command: 'runtime-e', model: 'runtime-e-default' },
  { type: 'runtime_f_local', letter: 'F', command: 'runtime-f', model: 'runtime-f-default' },
  { type: 'runtime_g', letter: 'G', command: 'runtime-g', model: 'runtime-g-default', remote: true },
];

/** The config fields of a local placeholder runtime (the schema agents are validated with). */
const LOCAL_RUNTIME_FIELDS: Record<string, ConfigFieldSchema> = {
  ...COMMON_CONFIG_FIELDS,
  model: { type: 'string', minLength: 1 },
  cwd: { type: 'string', minLength: 1 },
  command: { type: 'string', minLength: 1, description: 'override of the runtime binary' },
  extraArgs: { type: 'string-array' },
  promptTemplate: { type: 'string' },
  instructionsFilePath: { type: 'string' },
  maxTurnsPerRun: { type: 'integer', minimum: 1 },
  dangerouslySkipPermissions: { type: 'boolean' },
};

const REMOTE_RUNTIME_FIELDS: Record<string, ConfigFieldSchema> = {
  ...COMMON_CONFIG_FIELDS,
  model: { type: 'string', minLength: 1 },
  url: { type: 'string', format: 'url' },
  cwd: { type: 'string' },
};

function describe(d: CliRuntimeDefaults): AdapterDescription {
  const model = d.model;
  return {
    label: `Generic JSON-lines CLI ${d.letter} (spec placeholder)`,
    configSchema: { type: 'object', properties: d.remote ? REMOTE_RUNTIME_FIELDS : LOCAL_RUNTIME_FIELDS },
    skills: 'persistent_in_cwd',
    genAiSystem: null,
    ...(d.modelOnCreate ? { createDefaults: (c: Record<string, unknown>) => (c.model === undefined ? { ...c, model } : c) } : {}),
  };
}

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
  readonly description: AdapterDescription;

  constructor(private readonly defaults: CliRuntimeDefaults) {
    this.type = defaults.type;
    this.description = describe(defaults);
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
