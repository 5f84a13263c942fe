import { Injectable } from '@nestjs/common';
import type { Actor } from '../../../common/auth/actor';

/** What the AI connections module (above adapters and agents) lends them: a connection as env, and its models. */
export interface AiConnectionEnvSource {
  /**
   * An agent config with the env an `aiConnection` selection gives a runtime of `type` (the key as a
   * secret reference, the base URL, the default model when the config names none); 4xx when the
   * selection names no usable connection.
   */
  configFor(
    actor: Actor,
    companyId: string,
    type: string,
    config: Record<string, unknown>,
    selection: unknown,
  ): Promise<Record<string, unknown>>;
  /** The model the caller's default connection for the runtime gives (its default model, else one its API lists), or null. */
  detectModel(
    actor: Actor,
    companyId: string,
    type: string,
    preferred: string[],
  ): Promise<{ model: string; source: string; models: string[] } | null>;
}

/**
 * Port: the board UI creates and tests agents with `aiConnection` (`{ provider, method, mode,
 * connectionId? }`) instead of env entries. The ai-connections module registers the source at start;
 * until then a selection changes nothing.
 */
@Injectable()
export class AiConnectionEnv {
  private source: AiConnectionEnvSource | null = null;

  register(source: AiConnectionEnvSource): void {
    this.source = source;
  }

  async configFor(
    actor: Actor,
    companyId: string,
    type: string,
    config: Record<string, unknown>,
    selection: unknown,
  ): Promise<Record<string, unknown>> {
    if (selection === undefined || selection === null || !this.source) return config;
    return this.source.configFor(actor, companyId, type, config, selection);
  }

  detectModel(actor: Actor, companyId: string, type: string, preferred: string[]) {
    return this.source ? this.source.detectModel(actor, companyId, type, preferred) : Promise.resolve(null);
  }
}
