import type { AdapterExecutor, AdapterRun, AdapterRunContext, EnvironmentReport } from './adapter.types';
import { baseChildEnv, commandCheck, DEFAULT_GRACE_SEC, num, runChild, str, strArray, validateEnv, validateTimeouts } from './executor-kit';

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
