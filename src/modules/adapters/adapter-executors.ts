import { Injectable } from '@nestjs/common';
import { endpointOutbound, OutboundTarget } from '../../common/net/outbound-guard';
import { registerGenAiSystem } from '../../common/tracing/run-tracing';
import { AppConfig } from '../../config/app-config';
import type { AdapterExecutor } from './adapter.types';
import { CLI_RUNTIMES, CliRuntimeAdapter } from './cli-runtime.adapter';
import { GatewayAdapter } from './gateway.adapter';
import { HttpAdapter } from './http.adapter';
import { ProcessAdapter } from './process.adapter';
import { codingCliRuntimes } from './runtimes/coding-cli-runtimes';

/**
 * Executors by adapter type, each with its description (label, config schema, skills delivery,
 * tracing name). Built-ins are registered here; external types join with register(). (Which types
 * agents may be created with is the registry's, made of these descriptions.)
 */
@Injectable()
export class AdapterExecutors {
  private readonly byType = new Map<string, AdapterExecutor>();
  /** the types registered at construction (external packages cannot drop them) */
  private readonly builtIn = new Set<string>();

  private readonly outbound: OutboundTarget;

  constructor(config: AppConfig) {
    // webhook targets: loopback allowed in local_trusted mode only (see endpointOutbound)
    const outbound = endpointOutbound(config);
    this.outbound = outbound;
    this.register(new ProcessAdapter());
    this.register(new HttpAdapter(outbound));
    for (const d of CLI_RUNTIMES) this.register(new CliRuntimeAdapter(d));
    this.register(new GatewayAdapter(outbound));
    // the environment test probes model endpoints through the guard, except the operator's own (SERVICE_AI_BASE_URLS)
    const trustedEndpoints = Object.values(config.runtimes?.aiBaseUrls ?? {}).map((u) => new URL(u).origin);
    for (const r of codingCliRuntimes()) {
      r.host = { cliPath: config.runtimes?.cliPath ?? [], outbound, trustedEndpoints };
      this.register(r);
    }
    for (const t of this.byType.keys()) this.builtIn.add(t);
  }

  private instanceConfigSource: (type: string) => Promise<Record<string, unknown>> = async () => ({});

  register(executor: AdapterExecutor): void {
    this.byType.set(executor.type, executor);
    // the runs' traces name the provider (tracing sits below adapters: it is told, it does not ask)
    registerGenAiSystem(executor.type, executor.description.genAiSystem);
  }

  /** Drops an external type's executor (built-in executors stay). */
  unregister(type: string): void {
    if (this.builtIn.has(type)) return;
    this.byType.delete(type);
    registerGenAiSystem(type, null);
  }

  /** Where the instance-level configuration of a type comes from (the adapters module's settings). */
  setInstanceConfigSource(source: (type: string) => Promise<Record<string, unknown>>): void {
    this.instanceConfigSource = source;
  }

  /** The agent's config over the type's instance-level config (the agent's keys win; `env` merges per variable). */
  async effectiveConfig(type: string, agentConfig: Record<string, unknown>): Promise<Record<string, unknown>> {
    const base = await this.instanceConfigSource(type);
    if (!base || Object.keys(base).length === 0) return agentConfig;
    const merged: Record<string, unknown> = { ...base, ...agentConfig };
    const envOf = (c: Record<string, unknown>) =>
      c.env && typeof c.env === 'object' && !Array.isArray(c.env) ? (c.env as Record<string, unknown>) : null;
    if (envOf(base) && envOf(agentConfig)) merged.env = { ...envOf(base), ...envOf(agentConfig) };
    return merged;
  }

  /**
   * The first URL of a config that the service would connect to and the outbound policy refuses
   * without DNS (IP literals, localhost): refused on save. The connection is checked again.
   */
  urlRefusal(type: string, config: Record<string, unknown>): { field: string; message: string } | null {
    for (const [field, schemes] of this.byType.get(type)?.description.outboundUrlFields ?? []) {
      const v = config[field];
      if (typeof v !== 'string') continue;
      const refused = this.outbound.guard.refusalOf(v, this.outbound.options, [...schemes]);
      if (refused) return { field, message: refused.message };
    }
    return null;
  }

  get(type: string): AdapterExecutor | undefined {
    return this.byType.get(type);
  }

  types(): string[] {
    return [...this.byType.keys()];
  }
}
