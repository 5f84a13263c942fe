import { Injectable } from '@nestjs/common';
import { isSecretRef, SecretRef } from './adapters/adapter.types';

/** Resolves a secret reference of adapterConfig.env to its value at launch (the secrets module registers it). */
export type SecretRefResolver = (ref: SecretRef, ctx: { companyId: string; agentId: string; runId: string }) => Promise<string>;

export class EnvResolutionError extends Error {}

/**
 * adapterConfig.env at launch: inline values as they are, secret references through the resolver
 * the secrets module registers. The resolved secret values are returned too, for log redaction.
 */
@Injectable()
export class RunEnvResolver {
  private secretResolver?: SecretRefResolver;

  registerSecretResolver(resolver: SecretRefResolver): void {
    this.secretResolver = resolver;
  }

  async resolve(env: unknown, ctx: { companyId: string; agentId: string; runId: string }): Promise<{ env: Record<string, string>; secrets: string[] }> {
    const out: Record<string, string> = {};
    const secrets: string[] = [];
    if (!env || typeof env !== 'object' || Array.isArray(env)) return { env: out, secrets };
    for (const [name, v] of Object.entries(env as Record<string, unknown>)) {
      if (typeof v === 'string') out[name] = v;
      else if (isSecretRef(v)) {
        if (!this.secretResolver) throw new EnvResolutionError(`env.${name} references a secret, but no secret provider is available`);
        try {
          out[name] = await this.secretResolver(v, ctx);
        } catch (err) {
          throw new EnvResolutionError(`env.${name}: ${(err as Error).message}`);
        }
        secrets.push(out[name]);
      } else if (v && typeof v === 'object' && typeof (v as { value?: unknown }).value === 'string') {
        // `{ type: "plain", value }` form some clients send for inline values
        out[name] = (v as { value: string }).value;
      }
    }
    return { env: out, secrets };
  }
}
