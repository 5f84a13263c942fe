import type { AdapterExecutor, AdapterRun, AdapterRunContext, EnvironmentReport } from './adapter.types';
import { isSecretRef } from '../secrets/secret-ref';
import { num, str, strArray } from './adapter.types';
import { baseChildEnv, commandCheck, runChild } from './child-process-run';

export const DEFAULT_GRACE_SEC = 15;

/** Problems of an `env` map: names must be variable names, values strings (`{ type: "plain", value }` too) or secret references. */
export function validateEnv(env: unknown): string[] {
  if (env === undefined) return [];
  if (!env || typeof env !== 'object' || Array.isArray(env)) return ['env must be an object'];
  const errors: string[] = [];
  for (const [k, v] of Object.entries(env)) {
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(k)) errors.push(`env name ${k} is not a valid variable name`);
    const plain =
      !!v && typeof v === 'object' && (v as { type?: unknown }).type === 'plain' && typeof (v as { value?: unknown }).value === 'string';
    if (typeof v !== 'string' && !plain && !isSecretRef(v))
      errors.push(`env.${k} must be a string, { type: "plain", value } or { type: "secret_ref", secretId }`);
  }
  return errors;
}

export function validateTimeouts(c: Record<string, unknown>): string[] {
  const errors: string[] = [];
  for (const k of ['timeoutSec', 'graceSec']) {
    const v = c[k];
    if (v !== undefined && (typeof v !== 'number' || !Number.isFinite(v) || v < 0)) errors.push(`${k} must be a number >= 0`);
  }
  return errors;
}

const ENV_SCHEMA = {
  type: 'object',
  additionalProperties: {
    oneOf: [
      { type: 'string' },
      { type: 'object', required: ['type', 'value'], properties: { type: { const: 'plain' }, value: { type: 'string' } } },
      {
        type: 'object',
        required: ['type', 'secretId'],
        properties: {
          type: { const: 'secret_ref' },
          secretId: { type: 'string' },
          version: { oneOf: [{ const: 'latest' }, { type: 'integer' }] },
        },
      },
    ],
  },
};

/** `process`: spawn `command` with `args` (no shell) in `cwd`, the wake context in SERVICE_* variables. */
export class ProcessAdapter implements AdapterExecutor {
  readonly type = 'process';
  readonly configSchema = {
    type: 'object',
    required: ['command'],
    properties: {
      command: { type: 'string', description: 'executable (path or name on PATH); never run through a shell' },
      args: { type: 'array', items: { type: 'string' } },
      cwd: { type: 'string' },
      env: ENV_SCHEMA,
      timeoutSec: { type: 'number', minimum: 0, default: 0, description: '0 = no timeout' },
      graceSec: { type: 'number', minimum: 0, default: DEFAULT_GRACE_SEC, description: 'SIGTERM to SIGKILL delay' },
    },
  };

  validateConfig(c: Record<string, unknown>): string[] {
    const errors: string[] = [];
    if (!str(c.command)) errors.push('command is required');
    if (c.args !== undefined && (!Array.isArray(c.args) || c.args.some((a) => typeof a !== 'string')))
      errors.push('args must be an array of strings');
    if (c.cwd !== undefined && typeof c.cwd !== 'string') errors.push('cwd must be a string');
    return [...errors, ...validateEnv(c.env), ...validateTimeouts(c)];
  }

  start(ctx: AdapterRunContext): AdapterRun {
    const c = ctx.config;
    return runChild({
      command: str(c.command) ?? '',
      args: strArray(c.args),
      cwd: str(c.cwd),
      env: { ...baseChildEnv(), ...ctx.configEnv, ...ctx.serviceEnv },
      timeoutSec: num(c.timeoutSec, 0),
      graceSec: num(c.graceSec, DEFAULT_GRACE_SEC),
      log: ctx.log,
      runAs: ctx.runAs,
      sandbox: ctx.sandbox,
      onSpawn: ctx.onProcessStarted,
    });
  }

  async testEnvironment(c: Record<string, unknown>): Promise<EnvironmentReport> {
    const command = str(c.command);
    const checks = [command ? commandCheck(command) : { name: 'command', ok: false, message: 'command is required' }];
    return { ok: checks.every((x) => x.ok), checks };
  }
}
