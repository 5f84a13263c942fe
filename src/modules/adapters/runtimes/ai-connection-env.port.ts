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
  /** What tells which model an agent of the runtime would use: see ModelHints. */
  modelHints(actor: Actor, companyId: string, type: string): Promise<ModelHints>;
}

export interface ModelHints {
  /** the default model of the caller's default connection for the runtime's provider */
  connectionDefault: string | null;
  /** the model the CLI chose itself in the company's latest run of the runtime that named none */
  lastRunDefault: string | null;
  /** the models the provider's API offers that connection's key */
  listed: string[];
}

const NO_HINTS: ModelHints = { connectionDefault: null, lastRunDefault: null, listed: [] };

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

  async modelHints(actor: Actor, companyId: string, type: string): Promise<ModelHints> {
    return this.source ? this.source.modelHints(actor, companyId, type).catch(() => NO_HINTS) : NO_HINTS;
  }
}
