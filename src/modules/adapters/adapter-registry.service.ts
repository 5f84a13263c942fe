import { Injectable } from '@nestjs/common';
import { AdapterConfigSchema, validateAgainstSchema } from './adapter-config-schema';
import { AdapterExecutors } from './adapter-executors';
import type { AdapterDescription } from './adapter.types';

/** One adapter type as agents are validated against it: its label, its config schema, the defaults it fills on create. */
export interface AdapterTypeDefinition {
  type: string;
  label: string;
  builtIn: boolean;
  configSchema: AdapterConfigSchema;
  /** create-time defaults (e.g. a default model, a generated device key); called on validated config */
  createDefaults?(config: Record<string, unknown>): Record<string, unknown>;
}

const definitionOf = (type: string, d: AdapterDescription, builtIn: boolean): AdapterTypeDefinition => ({
  type,
  label: d.label,
  builtIn,
  configSchema: d.configSchema,
  ...(d.createDefaults ? { createDefaults: d.createDefaults } : {}),
});

/**
 * The adapter type registry: the built-in executors' own descriptions (each executor carries its
 * label and config schema) plus types registered at run time by external adapter packages. This is
 * types and config only; execution is AdapterExecutors'.
 */
@Injectable()
export class AdapterRegistry {
  private readonly types = new Map<string, AdapterTypeDefinition>();

  constructor(executors: AdapterExecutors) {
    for (const type of executors.types()) this.types.set(type, definitionOf(type, executors.get(type)!.description, true));
  }

  /** Registers (or replaces) an external adapter type; built-in types cannot be replaced. */
  register(def: Omit<AdapterTypeDefinition, 'builtIn'>): void {
    if (this.types.get(def.type)?.builtIn) throw new Error(`adapter type ${def.type} is built in`);
    this.types.set(def.type, { ...def, builtIn: false });
  }

  /** Removes an external type; returns false for unknown or built-in types. */
  unregister(type: string): boolean {
    const def = this.types.get(type);
    if (!def || def.builtIn) return false;
    return this.types.delete(type);
  }

  get(type: string): AdapterTypeDefinition | undefined {
    return this.types.get(type);
  }

  has(type: string): boolean {
    return this.types.has(type);
  }

  list(): AdapterTypeDefinition[] {
    return [...this.types.values()];
  }

  /**
   * Schema check and normalisation; throws ConfigFieldError naming the field. `allowIncomplete`
   * skips the required keys (a built-in agent is provisioned before its setup is complete).
   */
  validateConfig(type: string, config: unknown, opts: { allowIncomplete?: boolean } = {}): Record<string, unknown> {
    const def = this.types.get(type);
    if (!def) throw new Error(`unknown adapter type ${type}`);
    return validateAgainstSchema(config, opts.allowIncomplete ? { ...def.configSchema, required: [] } : def.configSchema);
  }

  /** validateConfig plus the create-time defaults of the type. */
  prepareForCreate(type: string, config: unknown, opts: { allowIncomplete?: boolean } = {}): Record<string, unknown> {
    const out = this.validateConfig(type, config, opts);
    return this.types.get(type)!.createDefaults?.(out) ?? out;
  }
}
