import { Injectable, Logger } from '@nestjs/common';
import { isSecretRef } from '../secrets/secret-ref';
import { LaunchContributors, type LaunchContext, type LaunchContribution } from './launch-contributors.port';

export type { LaunchContext, LaunchContribution, LaunchEnvironmentContributor } from './launch-contributors.port';

export class EnvResolutionError extends Error {
  constructor(
    message: string,
    readonly code = 'secret_resolution_failed',
  ) {
    super(message);
  }
}

/** The whole launch environment of a run (agent and project bindings) plus the values to redact from logs. */
export type LaunchEnvironmentResolver = (ctx: LaunchContext) => Promise<{ env: Record<string, string>; redactValues: string[] }>;

const isContribution = (v: Record<string, string> | LaunchContribution): v is LaunchContribution =>
  Array.isArray((v as LaunchContribution).redactValues) && typeof (v as LaunchContribution).env === 'object';

/**
 * adapterConfig.env at launch: inline values as they are, secret references through the resolver
 * the secrets module registers. The resolved secret values are returned too, for log redaction.
 */
@Injectable()
export class RunEnvResolver {
  private launchResolver?: LaunchEnvironmentResolver;
  private readonly logger = new Logger('RunEnvResolver');

  constructor(private readonly contributors: LaunchContributors) {}

  async resolve(env: unknown, ctx: LaunchContext): Promise<{ env: Record<string, string>; secrets: string[] }> {
    const base = await this.resolveOwn(env, ctx);
    for (const c of this.contributors.all()) {
      try {
        const added = await c(ctx);
        if (isContribution(added)) {
          Object.assign(base.env, added.env);
          base.secrets.push(...added.redactValues);
        } else Object.assign(base.env, added);
      } catch (err) {
        this.logger.warn(`launch environment contributor failed for run ${ctx.runId}: ${(err as Error).message}`);
      }
    }
    return base;
  }

  /** When registered (the secrets module does), it resolves the whole launch environment. */
  registerLaunchResolver(resolver: LaunchEnvironmentResolver): void {
    this.launchResolver = resolver;
  }

  private async resolveOwn(env: unknown, ctx: LaunchContext): Promise<{ env: Record<string, string>; secrets: string[] }> {
    if (this.launchResolver) {
      try {
        const launch = await this.launchResolver(ctx);
        // the launch resolver reads the agent's stored env; the inline values of the config's env
        // (the type's instance-level env merged in) fill what the agent does not set itself
        return { env: { ...inlineValues(env), ...launch.env }, secrets: launch.redactValues };
      } catch (err) {
        const code = (err as { code?: unknown }).code;
        throw new EnvResolutionError((err as Error).message, typeof code === 'string' ? code : 'secret_resolution_failed');
      }
    }
    const out: Record<string, string> = {};
    const secrets: string[] = [];
    if (!env || typeof env !== 'object' || Array.isArray(env)) return { env: out, secrets };
    for (const [name, v] of Object.entries(env as Record<string, unknown>)) {
      if (typeof v === 'string') out[name] = v;
      else if (isSecretRef(v)) {
        throw new EnvResolutionError(`env.${name} references a secret, but no secret resolver is available`);
      } else if (v && typeof v === 'object' && typeof (v as { value?: unknown }).value === 'string') {
        // `{ type: "plain", value }` form some clients send for inline values
        out[name] = (v as { value: string }).value;
      }
    }
    return { env: out, secrets };
  }
}

/** The inline values of an env config (strings and `{ type: "plain", value }`); secret references are left out. */
function inlineValues(env: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  if (!env || typeof env !== 'object' || Array.isArray(env)) return out;
  for (const [name, v] of Object.entries(env as Record<string, unknown>)) {
    if (typeof v === 'string') out[name] = v;
    else if (v && typeof v === 'object' && !isSecretRef(v) && typeof (v as { value?: unknown }).value === 'string')
      out[name] = (v as { value: string }).value;
  }
  return out;
}
