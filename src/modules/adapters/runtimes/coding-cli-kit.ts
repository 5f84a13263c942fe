import * as fs from 'node:fs';
import * as path from 'node:path';
import { copyTreeIn, ensureDirIn, removeIn, writeFileIn } from '../../../common/fs/agent-home';
import { unreadableReason } from '../../../common/process/agent-user';
import type { ConfigFieldSchema } from '../adapter-config-schema';
import type { AdapterRunContext } from '../adapter.types';
import { validateEnv, validateTimeouts } from '../executor-kit';
import type { RuntimeProviders } from './model-providers';
import type { RuntimeProbe } from './runtime-environment';

/*
 * What the coding-agent CLI runtimes share besides their base class: the shapes a runtime and its
 * stream parser exchange, the config fields every CLI accepts, and the files written for the agent
 * (instructions, skills) as its own user.
 */

/** A plain object, or null. */
export const obj = (v: unknown): Record<string, unknown> | null =>
  v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : null;

/** One JSON object of a CLI's JSON-lines output, or null for any other line. */
export function jsonLine(line: string): Record<string, unknown> | null {
  if (!line.startsWith('{')) return null;
  try {
    return obj(JSON.parse(line));
  } catch {
    return null;
  }
}

/** A failure the CLI's stream or exit told us about, with a stable code. */
export interface RuntimeFailure {
  code: string;
  message: string;
}

/** Reads one CLI's event stream into the meter; one instance per attempt. */
export interface StreamParser {
  accept(line: string): void;
  readonly sessionId: string | null;
  readonly summary: string | null;
  /** the CLI's final result event arrived (the run is complete whatever the process does next) */
  readonly finished: boolean;
  /** an error the stream reported (auth, endpoint, unknown session, …) */
  readonly failure: RuntimeFailure | null;
  /** the session's cumulative totals after this attempt, where the CLI reports them per session (stored for the next resume) */
  readonly sessionTotals?: Record<string, unknown> | null;
  /** reads usage the CLI records outside its stream (called every POLL_MS while the CLI runs, and once after it exits) */
  poll?(): void;
  /** set by the runtime: the parser read usage outside the stream (a watched session file) */
  onUpdate?: (() => void) | null;
  /** the attempt ended: stop watching */
  close?(): void;
  /**
   * Whether a stdout line goes into the run's log. When set, stdout is logged line by line through
   * it (a CLI's bulk metering events stay out of the log and its transcript); else as it comes.
   */
  keepInLog?(line: string): boolean;
}

/** One run as the runtime prepares it. */
export interface PreparedRun {
  ctx: AdapterRunContext;
  config: Record<string, unknown>;
  /** the CLI's HOME: the agent's private home, where it keeps sessions and logins */
  home: string;
  cwd: string;
  model: string | null;
  prompt: string;
  /** instructions for the system prompt / instruction file: promptTemplate, instructions, the instructions file */
  instructions: string | null;
  /** the run's skills folder (SERVICE_SKILLS_DIR), when the agent has skills */
  skillsDir: string | null;
  env: Record<string, string>;
  /** what shapes the CLI's session: a session is resumed only while these are the same */
  sessionShape: SessionShape;
}

/** What shapes a CLI session (stored with the run as `resultJson.sessionShape`). */
export interface SessionShape {
  adapterType: string;
  model: string | null;
  /** sha-256 of the instructions (system prompt / instructions file), first 16 hex digits; null without */
  instructions: string | null;
  /** the working folder */
  cwd: string;
}

const SHAPE_NAMES: Record<keyof SessionShape, string> = {
  adapterType: 'adapter type',
  model: 'model',
  instructions: 'instructions',
  cwd: 'working folder',
};

/** What differs between the shape a session was made with and this run's (a session recorded without one: nothing). */
export function shapeChanges(before: Record<string, unknown> | null | undefined, now: SessionShape): string[] {
  if (!before) return [];
  return (Object.keys(SHAPE_NAMES) as Array<keyof SessionShape>)
    .filter((k) => k in before && (before[k] ?? null) !== now[k])
    .map((k) => SHAPE_NAMES[k]);
}

/**
 * A coding-agent CLI as its runtime file declares it: everything the service needs to list it,
 * validate its agents' config, check its environment, trace and bill its runs.
 */
export interface CliSpec extends RuntimeProbe, RuntimeProviders {
  /** the adapter type (the board UI's name for it, e.g. `claude_local`) */
  type: string;
  /** the name people know it by (`GET /api/adapters` label) */
  label: string;
  /** the provider its usage is booked under (cost events' provider and biller; its model turns' spans) */
  provider: string;
  /** the run span's `gen_ai.system` (OpenTelemetry's name for the provider) */
  genAiSystem: string;
  defaultModel: string | null;
  /** the variable the CLI reads its default model from, if any */
  modelEnv: string | null;
  models: Array<{ id: string; label: string }>;
  /** config fields beyond the shared ones */
  extraSchema: Record<string, ConfigFieldSchema>;
}

export const DEFAULT_IDLE_TIMEOUT_SEC = 900;

/** Config fields every coding-agent CLI accepts (the board UI's form sends these). */
export const CODING_CLI_FIELDS: Record<string, ConfigFieldSchema> = {
  env: { type: 'env', description: 'environment variables: inline strings or secret references' },
  timeoutSec: { type: 'integer', minimum: 0, description: 'run time limit in seconds; 0 = none' },
  graceSec: { type: 'integer', minimum: 0, description: 'grace period after SIGTERM' },
  serviceSkillSync: { type: 'object', description: 'skills sync state; desiredSkills' },
  command: { type: 'string', minLength: 1, description: 'path or name of the CLI binary' },
  model: { type: 'string', minLength: 1 },
  cwd: { type: 'string', minLength: 1, description: 'working directory when the run has no project workspace (default: the agent home)' },
  instructionsFilePath: { type: 'string', description: 'a file with the agent instructions, delivered where the CLI reads them' },
  promptTemplate: { type: 'string', description: 'agent instructions placed in the system prompt / instruction file' },
  instructions: { type: 'string' },
  extraArgs: { type: 'string-array', description: 'extra CLI arguments, appended' },
  maxTurnsPerRun: { type: 'integer', minimum: 1, description: 'the CLI’s own turn limit, where it has one' },
  idleTimeoutSec: {
    type: 'integer',
    minimum: 0,
    description: `no output for this long ends the run (default ${DEFAULT_IDLE_TIMEOUT_SEC}; 0 = off)`,
  },
  maxConnectRetries: {
    type: 'integer',
    minimum: 1,
    description: 'failed connections to the model endpoint before the run ends (default 3)',
  },
  modelPrices: {
    type: 'object',
    description: 'USD per million tokens by model: { "<model>": { input, cachedInput, cacheWrite, output } }',
  },
};

/** The numeric / string / list config checks shared by the four CLIs (the registry's schema does the create-time checks). */
export function validateShared(c: Record<string, unknown>, extra: Record<string, ConfigFieldSchema>): string[] {
  const errors: string[] = [];
  for (const [k, s] of Object.entries({ ...CODING_CLI_FIELDS, ...extra })) {
    const v = c[k];
    if (v === undefined || v === null) continue;
    if (s.type === 'string' && typeof v !== 'string') errors.push(`${k} must be a string`);
    if (s.type === 'boolean' && typeof v !== 'boolean') errors.push(`${k} must be a boolean`);
    if (s.type === 'integer' && !(Number.isInteger(v) && (v as number) >= 0)) errors.push(`${k} must be an integer >= 0`);
    if (s.type === 'string-array' && (!Array.isArray(v) || v.some((a) => typeof a !== 'string')))
      errors.push(`${k} must be an array of strings`);
  }
  return [...errors, ...validateEnv(c.env), ...validateTimeouts(c)];
}

/**
 * Writes a file the agent's processes own (the service may be root, the CLI runs as the agent's
 * user): through descriptors, never through a link the agent planted in its home (common/fs/agent-home).
 */
export function writeAgentFile(file: string, content: string, ctx: AdapterRunContext): void {
  writeFileIn(ctx.runAs, file, content);
}

/** Why the agent's user may not read `file` (its directory must be enterable, the file readable), or null. */
export function agentCannotRead(file: string, ctx: AdapterRunContext): string | null {
  if (!ctx.runAs) return null;
  if (!fs.existsSync(file)) return `${file} does not exist`;
  return unreadableReason(file, ctx.runAs);
}

/** A directory under the agent's home that its processes own (created when missing; common/fs/agent-home). */
export function ensureAgentDir(dir: string, ctx: AdapterRunContext): void {
  ensureDirIn(ctx.runAs, dir);
}

/**
 * Copies the run's skill folders into `target` (the CLI's skills folder), as the agent's files, never
 * through a link put in its home (common/fs/agent-home); returns the paths for removeDelivered.
 */
export function deliverSkills(run: PreparedRun, target: string): string[] {
  if (!run.skillsDir || !fs.existsSync(run.skillsDir)) return [];
  const names: string[] = [];
  for (const name of fs.readdirSync(run.skillsDir)) {
    const from = path.join(run.skillsDir, name);
    if (!fs.lstatSync(from).isDirectory()) continue;
    const to = path.join(target, name);
    try {
      copyTreeIn(run.ctx.runAs, from, to);
      names.push(to);
    } catch (err) {
      run.ctx.log('system', `skill ${name} not delivered to ${target}: ${(err as Error).message}\n`);
    }
  }
  return names;
}

/** Removes what deliverSkills() put into the agent's home (through descriptors: never outside it). */
export function removeDelivered(run: PreparedRun, paths: string[]): void {
  for (const p of paths) {
    try {
      removeIn(run.ctx.runAs, p);
    } catch (err) {
      run.ctx.log('system', `could not remove ${p}: ${(err as Error).message}\n`);
    }
  }
}
