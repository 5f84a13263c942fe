import { COMMON_CONFIG_FIELDS } from './adapter-config-schema';
import type { AdapterDescription, AdapterExecutor, AdapterRun, AdapterRunContext, EnvironmentReport } from './adapter.types';
import { baseChildEnv, commandCheck, DEFAULT_GRACE_SEC, num, runChild, str, strArray, validateEnv, validateTimeouts } from './executor-kit';

/** `process`: spawn `command` with `args` (no shell) in `cwd`, the wake context in SERVICE_* variables. */
export class ProcessAdapter implements AdapterExecutor {
  readonly type = 'process';
  readonly description: AdapterDescription = {
    label: 'Local process',
    configSchema: {
      type: 'object',
      required: ['command'],
      properties: {
        ...COMMON_CONFIG_FIELDS,
        command: { type: 'string', minLength: 1, description: 'executable (path or name on PATH); never run through a shell' },
        args: { type: 'string-array' },
        cwd: { type: 'string', minLength: 1 },
      },
    },
    skills: 'ephemeral',
    genAiSystem: null,
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
