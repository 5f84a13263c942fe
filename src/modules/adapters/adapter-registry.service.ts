import { generateKeyPairSync } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { AdapterConfigSchema, ConfigFieldSchema, validateAgainstSchema } from './adapter-config-schema';
import { codingCliRuntimes } from './runtimes/coding-cli-runtimes';

/** One adapter type: its configuration schema and the defaults it fills when an agent is created. */
export interface AdapterTypeDefinition {
  type: string;
  label: string;
  builtIn: boolean;
  configSchema: AdapterConfigSchema;
  /** create-time defaults (e.g. a default model, a generated device key); called on validated config */
  createDefaults?(config: Record<string, unknown>): Record<string, unknown>;
  /** extra checks beyond the schema; throw ConfigFieldError */
  validate?(config: Record<string, unknown>): void;
}

export const BUILT_IN_ADAPTER_TYPES = [
  'process',
  'http',
  'runtime_a_local',
  'runtime_b_local',
  'runtime_c_local',
  'runtime_d_local',
  'runtime_e_local',
  'runtime_f_local',
  'runtime_g',
  'gateway_a',
  'claude_local',
  'codex_local',
  'gemini_local',
  'opencode_local',
] as const;

/** The coding-agent CLIs as their users know them (the board UI's adapter list shows these). */
const RUNTIME_LABELS: Record<string, string> = {
  claude_local: 'Claude Code',
  codex_local: 'Codex',
  gemini_local: 'Gemini CLI',
  opencode_local: 'OpenCode',
};

/** Keys every adapter config may carry (runtime knobs shared by the heartbeat engine). */
const COMMON: Record<string, ConfigFieldSchema> = {
  env: { type: 'env', description: 'environment variables: inline strings or secret references' },
  // the executors' rule: 0 = no limit (process, local runtimes) or the adapter's default (http, gateway_a)
  timeoutSec: { type: 'integer', minimum: 0, description: 'run time limit in seconds; 0 = none (http, gateway_a: their default)' },
  graceSec: { type: 'integer', minimum: 0, description: 'grace period after SIGTERM' },
  serviceSkillSync: { type: 'object', description: 'skills sync state; desiredSkills' },
};

const LOCAL_RUNTIME: Record<string, ConfigFieldSchema> = {
  ...COMMON,
  model: { type: 'string', minLength: 1 },
  cwd: { type: 'string', minLength: 1 },
  command: { type: 'string', minLength: 1, description: 'override of the runtime binary' },
  extraArgs: { type: 'string-array' },
  promptTemplate: { type: 'string' },
  instructionsFilePath: { type: 'string' },
  maxTurnsPerRun: { type: 'integer', minimum: 1 },
  dangerouslySkipPermissions: { type: 'boolean' },
};

/** Local runtimes that fill a model when none is given. */
const DEFAULT_MODELS: Record<string, string> = {
  runtime_a_local: 'runtime-a-default',
  runtime_b_local: 'runtime-b-default',
  runtime_c_local: 'runtime-c-default',
};

function localRuntime(type: string, label: string): AdapterTypeDefinition {
  const model = DEFAULT_MODELS[type];
  return {
    type,
    label,
    builtIn: true,
    configSchema: { type: 'object', properties: LOCAL_RUNTIME },
    createDefaults: model ? (c) => (c.model === undefined ? { ...c, model } : c) : undefined,
  };
}

function builtIns(): AdapterTypeDefinition[] {
  return [
    {
      type: 'process',
      label: 'Local process',
      builtIn: true,
      configSchema: {
        type: 'object',
        required: ['command'],
        properties: {
          ...COMMON,
          command: { type: 'string', minLength: 1 },
          args: { type: 'string-array' },
          cwd: { type: 'string', minLength: 1 },
        },
      },
    },
    {
      type: 'http',
      label: 'HTTP endpoint',
      builtIn: true,
      configSchema: {
        type: 'object',
        required: ['url'],
        properties: {
          ...COMMON,
          url: { type: 'string', format: 'url' },
          method: { type: 'string', enum: ['GET', 'POST', 'PUT', 'PATCH'] },
          headers: { type: 'string-map' },
          payloadTemplate: { type: 'object' },
        },
      },
    },
    // the spec's placeholder names: a generic JSON-lines CLI protocol (docs/runtimes.md), not a product
    localRuntime('runtime_a_local', 'Generic JSON-lines CLI A (spec placeholder)'),
    localRuntime('runtime_b_local', 'Generic JSON-lines CLI B (spec placeholder)'),
    localRuntime('runtime_c_local', 'Generic JSON-lines CLI C (spec placeholder)'),
    localRuntime('runtime_d_local', 'Generic JSON-lines CLI D (spec placeholder)'),
    localRuntime('runtime_e_local', 'Generic JSON-lines CLI E (spec placeholder)'),
    localRuntime('runtime_f_local', 'Generic JSON-lines CLI F (spec placeholder)'),
    {
      type: 'runtime_g',
      label: 'Generic JSON-lines CLI G (spec placeholder)',
      builtIn: true,
      configSchema: {
        type: 'object',
        properties: { ...COMMON, model: { type: 'string', minLength: 1 }, url: { type: 'string', format: 'url' }, cwd: { type: 'string' } },
      },
    },
    {
      type: 'gateway_a',
      label: 'WebSocket gateway (spec placeholder)',
      builtIn: true,
      configSchema: {
        type: 'object',
        required: ['url'],
        properties: {
          ...COMMON,
          url: { type: 'string', format: 'uri-or-ws' },
          authToken: { type: 'string' },
          disableDeviceAuth: { type: 'boolean' },
          devicePrivateKeyPem: { type: 'string', minLength: 1 },
          sessionKey: { type: 'string' },
        },
      },
      // a device identity is generated once, unless device authentication is disabled
      createDefaults: (c) =>
        c.disableDeviceAuth === true || c.devicePrivateKeyPem !== undefined
          ? c
          : { ...c, devicePrivateKeyPem: generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }).toString() },
    },
    // the coding-agent CLIs: their schema is their executor's (the fields the board UI's form sends)
    ...codingCliRuntimes().map((r): AdapterTypeDefinition => ({
      type: r.type,
      label: RUNTIME_LABELS[r.type] ?? r.spec.label,
      builtIn: true,
      configSchema: r.configSchema as unknown as AdapterConfigSchema,
    })),
  ];
}

/**
 * The adapter type registry: the spec's built-in types plus types registered at run time by
 * external adapter packages. Execution lives in the heartbeat engine; this is types and config only.
 */
@Injectable()
export class AdapterRegistry {
  private readonly types = new Map<string, AdapterTypeDefinition>(builtIns().map((d) => [d.type, d]));

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
    const out = validateAgainstSchema(config, opts.allowIncomplete ? { ...def.configSchema, required: [] } : def.configSchema);
    def.validate?.(out);
    return out;
  }

  /** validateConfig plus the create-time defaults of the type. */
  prepareForCreate(type: string, config: unknown, opts: { allowIncomplete?: boolean } = {}): Record<string, unknown> {
    const out = this.validateConfig(type, config, opts);
    return this.types.get(type)!.createDefaults?.(out) ?? out;
  }
}
