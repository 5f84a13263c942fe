import Ajv, { type ValidateFunction } from 'ajv';
import { CronExpressionParser } from 'cron-parser';

/**
 * The plugin manifest (`plugin.json` at the package root), protocol version 1.
 *
 * The plugin runtime is alpha (spec, Versioning 6): a plugin declares the protocol version it
 * speaks, and the service refuses versions it does not implement, so plugin and service versions
 * are pinned in lockstep.
 */
export const PLUGIN_PROTOCOL_VERSIONS = [1] as const;
export const MANIFEST_FILE = 'plugin.json';

/** What a worker may ask of the host. Each host method needs one (see HOST_METHODS). */
export const PLUGIN_CAPABILITIES = ['http.outbound', 'config.read', 'events.subscribe', 'ui.stream', 'folders.read'] as const;
export type PluginCapability = (typeof PLUGIN_CAPABILITIES)[number];

export interface ManifestTool {
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
  timeoutMs?: number;
}
export interface ManifestJob {
  key: string;
  description?: string;
  schedule: string;
  timezone?: string;
}
export interface ManifestEndpoint {
  key: string;
  description?: string;
}
export interface ManifestFeed {
  key: string;
  description?: string;
}
export interface ManifestSlot {
  slot: string;
  label: string;
  [k: string]: unknown;
}
export interface ManifestFolder {
  key: string;
  description?: string;
  access?: 'read' | 'readwrite';
}

export interface PluginManifest {
  protocolVersion: number;
  key: string;
  version: string;
  displayName: string;
  description?: string;
  /** worker entry file, relative to the package root (run with node) */
  entry: string;
  capabilities: PluginCapability[];
  configSchema?: Record<string, unknown>;
  jobs: ManifestJob[];
  webhooks: ManifestEndpoint[];
  tools: ManifestTool[];
  data: ManifestFeed[];
  actions: ManifestFeed[];
  /** activity actions delivered to the worker (`*` = all); needs capability events.subscribe */
  events: string[];
  ui: { slots: ManifestSlot[]; launchers: ManifestSlot[] };
  localFolders: ManifestFolder[];
}

const KEY = '^[a-z0-9][a-z0-9._-]{0,63}$';
const keyed = {
  type: 'object',
  required: ['key'],
  properties: { key: { type: 'string', pattern: KEY }, description: { type: 'string', maxLength: 1000 } },
};
const slot = {
  type: 'object',
  required: ['slot', 'label'],
  properties: { slot: { type: 'string', pattern: '^[a-z][a-zA-Z0-9._-]{0,63}$' }, label: { type: 'string', minLength: 1, maxLength: 200 } },
};

const MANIFEST_SCHEMA = {
  type: 'object',
  required: ['protocolVersion', 'key', 'version', 'displayName', 'entry'],
  additionalProperties: true,
  properties: {
    protocolVersion: { type: 'integer' },
    key: { type: 'string', pattern: KEY },
    version: { type: 'string', pattern: '^\\d+\\.\\d+\\.\\d+([-+][0-9A-Za-z.-]+)?$' },
    displayName: { type: 'string', minLength: 1, maxLength: 200 },
    description: { type: 'string', maxLength: 2000 },
    entry: { type: 'string', minLength: 1, maxLength: 500 },
    capabilities: { type: 'array', items: { enum: [...PLUGIN_CAPABILITIES] }, uniqueItems: true },
    configSchema: { type: 'object' },
    jobs: {
      type: 'array',
      maxItems: 50,
      items: {
        ...keyed,
        required: ['key', 'schedule'],
        properties: { ...keyed.properties, schedule: { type: 'string' }, timezone: { type: 'string' } },
      },
    },
    webhooks: { type: 'array', maxItems: 50, items: keyed },
    tools: {
      type: 'array',
      maxItems: 100,
      items: {
        type: 'object',
        required: ['name', 'description', 'inputSchema'],
        properties: {
          name: { type: 'string', pattern: KEY },
          description: { type: 'string', maxLength: 2000 },
          inputSchema: { type: 'object' },
          timeoutMs: { type: 'integer', minimum: 10, maximum: 600000 },
        },
      },
    },
    data: { type: 'array', maxItems: 50, items: keyed },
    actions: { type: 'array', maxItems: 50, items: keyed },
    events: { type: 'array', maxItems: 200, items: { type: 'string', pattern: '^(\\*|[a-z_]+(\\.[a-z_]+)+)$' } },
    ui: {
      type: 'object',
      properties: { slots: { type: 'array', maxItems: 50, items: slot }, launchers: { type: 'array', maxItems: 50, items: slot } },
    },
    localFolders: {
      type: 'array',
      maxItems: 20,
      items: { ...keyed, properties: { ...keyed.properties, access: { enum: ['read', 'readwrite'] } } },
    },
  },
};

export const ajv = new Ajv({ allErrors: true, strict: false, useDefaults: false });
const validateManifestShape = ajv.compile(MANIFEST_SCHEMA);

const schemaCache = new Map<string, ValidateFunction>();
const SCHEMA_CACHE_MAX = 1000;
/**
 * A compiled validator for a JSON schema a plugin declared, cached by the schema's text (records
 * are read from the database per request; compiling costs milliseconds, a lookup microseconds).
 */
export function compileSchema(schema: Record<string, unknown>): ValidateFunction {
  const key = JSON.stringify(schema);
  let v = schemaCache.get(key);
  if (!v) {
    if (schemaCache.size >= SCHEMA_CACHE_MAX) schemaCache.delete(schemaCache.keys().next().value as string);
    v = ajv.compile(schema);
    schemaCache.set(key, v);
  }
  return v;
}

export const schemaProblems = (v: ValidateFunction): string[] =>
  (v.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message ?? 'is invalid'}`.trim());

/** Validates a parsed manifest; returns it normalised (absent lists become []) or the problems found. */
export function parseManifest(raw: unknown): { manifest: PluginManifest; problems: [] } | { manifest: null; problems: string[] } {
  if (!validateManifestShape(raw)) return { manifest: null, problems: schemaProblems(validateManifestShape) };
  const m = raw as Record<string, unknown> & PluginManifest;
  const problems: string[] = [];
  if (!(PLUGIN_PROTOCOL_VERSIONS as readonly number[]).includes(m.protocolVersion)) {
    problems.push(`protocolVersion ${m.protocolVersion} is not supported (supported: ${PLUGIN_PROTOCOL_VERSIONS.join(', ')})`);
  }
  if (m.entry.startsWith('/') || m.entry.split(/[\\/]/).includes('..')) problems.push('entry must be a path inside the package');
  const manifest: PluginManifest = {
    protocolVersion: m.protocolVersion,
    key: m.key,
    version: m.version,
    displayName: m.displayName,
    description: m.description,
    entry: m.entry,
    capabilities: m.capabilities ?? [],
    configSchema: m.configSchema,
    jobs: m.jobs ?? [],
    webhooks: m.webhooks ?? [],
    tools: m.tools ?? [],
    data: m.data ?? [],
    actions: m.actions ?? [],
    events: m.events ?? [],
    ui: { slots: m.ui?.slots ?? [], launchers: m.ui?.launchers ?? [] },
    localFolders: m.localFolders ?? [],
  };
  for (const [what, list, field] of [
    ['jobs', manifest.jobs, 'key'],
    ['webhooks', manifest.webhooks, 'key'],
    ['tools', manifest.tools, 'name'],
    ['data', manifest.data, 'key'],
    ['actions', manifest.actions, 'key'],
    ['localFolders', manifest.localFolders, 'key'],
  ] as const) {
    const seen = new Set<string>();
    for (const item of list as unknown as Record<string, string>[]) {
      if (seen.has(item[field])) problems.push(`${what}: duplicate ${field} "${item[field]}"`);
      seen.add(item[field]);
    }
  }
  for (const j of manifest.jobs) {
    try {
      CronExpressionParser.parse(j.schedule, { tz: j.timezone ?? 'UTC' });
    } catch (err) {
      problems.push(`jobs.${j.key}: invalid schedule "${j.schedule}": ${(err as Error).message}`);
    }
  }
  for (const [where, schema] of [
    ['configSchema', manifest.configSchema],
    ...manifest.tools.map((t) => [`tools.${t.name}.inputSchema`, t.inputSchema] as const),
  ] as const) {
    if (!schema) continue;
    try {
      ajv.compile(schema as Record<string, unknown>);
    } catch (err) {
      problems.push(`${where}: not a valid JSON schema: ${(err as Error).message}`);
    }
  }
  if (manifest.events.length && !manifest.capabilities.includes('events.subscribe'))
    problems.push('events: needs capability events.subscribe');
  return problems.length ? { manifest: null, problems } : { manifest, problems: [] };
}

/** Config fields holding secrets: `"x-secret": true` on a top-level property of the config schema. */
export function secretFields(manifest: PluginManifest): string[] {
  const props = (manifest.configSchema?.properties ?? {}) as Record<string, Record<string, unknown>>;
  return Object.entries(props)
    .filter(([, p]) => p && p['x-secret'] === true)
    .map(([k]) => k);
}
