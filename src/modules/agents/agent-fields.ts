import { urlKeyOf } from '../../common/http/url-key';
import { agentError, type AgentFieldErrorCode } from './agents.errors';

/** The metadata key only the built-in agents feature writes. */
export const BUILT_IN_MARKER_KEY = 'serviceBuiltInAgent';
/** Where desiredSkills are persisted inside adapterConfig. */
export const SKILL_SYNC_KEY = 'serviceSkillSync';
/** adapterConfig keys kept when the config is replaced (instruction bundle and skills settings). */
export const PRESERVED_ON_REPLACE = [SKILL_SYNC_KEY, 'instructionsBundle', 'instructionsFilePath'];

const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A 4xx that names the offending field of the request body. */
export const invalidField = (field: string, message: string, code: AgentFieldErrorCode = 'invalid_field') =>
  agentError(code, message, { field });

/** Company-unique URL key base of an agent name. */
export const urlKeyFromName = (name: string): string => urlKeyOf(name, 'agent');

/** heartbeat.enabled defaults to false; intervalSec and the per-run caps must be positive integers. */
export function normalizeRuntimeConfig(
  input: Record<string, unknown> | undefined,
  base: Record<string, unknown> = {},
): Record<string, unknown> {
  const merged: Record<string, unknown> = { ...base, ...(input ?? {}) };
  const hb = merged.heartbeat ?? {};
  if (!isPlainObject(hb)) throw invalidField('runtimeConfig.heartbeat', 'runtimeConfig.heartbeat must be an object');
  const heartbeat: Record<string, unknown> = { ...(isPlainObject(base.heartbeat) ? base.heartbeat : {}), ...hb };
  if (heartbeat.enabled === undefined) heartbeat.enabled = false;
  if (typeof heartbeat.enabled !== 'boolean')
    throw invalidField('runtimeConfig.heartbeat.enabled', 'runtimeConfig.heartbeat.enabled must be a boolean');
  if (heartbeat.intervalSec !== undefined && heartbeat.intervalSec !== null) {
    if (!Number.isInteger(heartbeat.intervalSec) || (heartbeat.intervalSec as number) < 1) {
      throw invalidField('runtimeConfig.heartbeat.intervalSec', 'runtimeConfig.heartbeat.intervalSec must be a positive integer');
    }
  }
  merged.heartbeat = heartbeat;
  // per-run caps: a run crossing one is stopped (heartbeat engine), with what it spent booked
  for (const key of ['maxCostCents', 'maxTokens', 'maxTurns', 'maxDurationSec']) {
    const v = merged[key];
    if (v === null) delete merged[key];
    else if (v !== undefined && !(Number.isInteger(v) && (v as number) >= 1))
      throw invalidField(`runtimeConfig.${key}`, `runtimeConfig.${key} must be a positive integer`);
  }
  return merged;
}

/** metadata.serviceBuiltInAgent is an immutable marker: refused when a route tries to write it. */
export function assertNoBuiltInMarker(metadata: Record<string, unknown> | undefined): void {
  if (metadata && BUILT_IN_MARKER_KEY in metadata) {
    throw invalidField(
      `metadata.${BUILT_IN_MARKER_KEY}`,
      `metadata.${BUILT_IN_MARKER_KEY} is reserved for built-in agents and cannot be written`,
      'reserved_metadata_key',
    );
  }
}

/** PATCH metadata replaces the object but keeps the built-in marker of the stored one. */
export function mergeMetadata(stored: Record<string, unknown>, incoming: Record<string, unknown>): Record<string, unknown> {
  const out = { ...incoming };
  if (BUILT_IN_MARKER_KEY in stored) out[BUILT_IN_MARKER_KEY] = stored[BUILT_IN_MARKER_KEY];
  return out;
}

/** adapterConfig for PATCH: shallow merge, or replacement that keeps the preserved keys. */
export function mergeAdapterConfig(
  stored: Record<string, unknown>,
  incoming: Record<string, unknown>,
  replace: boolean,
): Record<string, unknown> {
  if (!replace) return { ...stored, ...incoming };
  const kept = Object.fromEntries(PRESERVED_ON_REPLACE.filter((k) => k in stored && !(k in incoming)).map((k) => [k, stored[k]]));
  return { ...kept, ...incoming };
}

export function withDesiredSkills(config: Record<string, unknown>, desiredSkills: string[] | undefined): Record<string, unknown> {
  if (desiredSkills === undefined) return config;
  const sync = isPlainObject(config[SKILL_SYNC_KEY]) ? (config[SKILL_SYNC_KEY] as Record<string, unknown>) : {};
  return { ...config, [SKILL_SYNC_KEY]: { ...sync, desiredSkills: [...new Set(desiredSkills)] } };
}

export function desiredSkillsOf(config: Record<string, unknown>): string[] {
  const sync = config[SKILL_SYNC_KEY];
  const list = isPlainObject(sync) ? sync.desiredSkills : undefined;
  return Array.isArray(list) ? list.filter((x): x is string => typeof x === 'string') : [];
}

export const ceoDefaultPermissions = (role: string): Record<string, unknown> => (role === 'ceo' ? { canCreateAgents: true } : {});
