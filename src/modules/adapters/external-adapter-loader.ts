import * as fs from 'node:fs';
import * as path from 'node:path';
import type { AdapterConfigSchema } from './adapter-config-schema';
import type { AdapterExecutor, AdapterRun, AdapterRunContext, EnvironmentReport } from './adapter.types';
import type { RunOutcome } from './run.types';
import { adapterError } from './adapters.errors';

/** package.json of an adapter package: `serviceAdapter.entry` (default `main`), optional `serviceAdapter.uiParser`. */
export interface AdapterPackageInfo {
  packageName: string;
  version: string;
  entry: string;
  uiParser: string | null;
}

/** What an adapter module exports (the contract of the built-in adapters). */
export interface ExternalAdapterModule {
  type: string;
  label?: string;
  configSchema?: AdapterConfigSchema;
  execute(ctx: ExternalRunContext): Promise<RunOutcome>;
  testEnvironment?(config: Record<string, unknown>): Promise<EnvironmentReport>;
  validateConfig?(config: Record<string, unknown>): string[];
}

/**
 * The context an external adapter's execute() gets: the built-in adapters' context without the
 * process hooks (external modules start no tracked process groups), log without the system stream,
 * and an abort signal for cancellation.
 */
export interface ExternalRunContext extends Pick<
  AdapterRunContext,
  | 'runId'
  | 'agentId'
  | 'companyId'
  | 'adapterType'
  | 'config'
  | 'configEnv'
  | 'agent'
  | 'context'
  | 'apiUrl'
  | 'runToken'
  | 'serviceEnv'
  | 'resumeSessionId'
> {
  log(stream: 'stdout' | 'stderr', chunk: string): void;
  /** aborted when the run is cancelled */
  signal: AbortSignal;
}

export interface LoadedAdapter {
  module: ExternalAdapterModule;
  info: AdapterPackageInfo;
  dir: string;
  label: string;
  configSchema: AdapterConfigSchema;
}

const TYPE = /^[a-z][a-z0-9_]{1,63}$/;
const FINAL = ['succeeded', 'failed', 'cancelled', 'timed_out'];

export function readAdapterPackage(dir: string): AdapterPackageInfo {
  let pkg: Record<string, unknown>;
  try {
    pkg = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8')) as Record<string, unknown>;
  } catch (err) {
    throw adapterError('adapter_package_invalid', `package.json missing or not JSON: ${(err as Error).message}`);
  }
  const meta = (pkg.serviceAdapter ?? null) as Record<string, unknown> | null;
  if (!meta || typeof meta !== 'object')
    throw adapterError('adapter_package_invalid', 'package.json has no "serviceAdapter" object: not an adapter package');
  const entry = typeof meta.entry === 'string' ? meta.entry : typeof pkg.main === 'string' ? pkg.main : 'index.js';
  const uiParser = typeof meta.uiParser === 'string' ? meta.uiParser : null;
  const inside = (rel: string) => {
    const abs = path.resolve(dir, rel);
    if (!abs.startsWith(path.resolve(dir) + path.sep)) throw adapterError('adapter_package_invalid', `${rel} points outside the package`);
    if (!fs.existsSync(abs)) throw adapterError('adapter_package_invalid', `${rel} not found in the package`);
  };
  inside(entry);
  if (uiParser) inside(uiParser);
  if (typeof pkg.name !== 'string' || typeof pkg.version !== 'string')
    throw adapterError('adapter_package_invalid', 'package.json needs name and version');
  return { packageName: pkg.name, version: pkg.version, entry, uiParser };
}

/**
 * Imports the adapter module from `dir`, fresh: the files of that directory are dropped from the
 * require cache first, so a reload picks up changed code; runs already executing keep the functions
 * of the module they started with.
 */
export function importAdapter(dir: string): LoadedAdapter {
  const info = readAdapterPackage(dir);
  const root = path.resolve(dir) + path.sep;
  for (const key of Object.keys(require.cache)) if (key.startsWith(root)) delete require.cache[key];
  let mod: ExternalAdapterModule;
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const loaded = require(path.resolve(dir, info.entry)) as ExternalAdapterModule & { default?: ExternalAdapterModule };
    mod = loaded.default && typeof loaded.default === 'object' ? loaded.default : loaded;
  } catch (err) {
    throw adapterError('adapter_package_invalid', `the adapter module failed to load: ${(err as Error).message}`);
  }
  if (!mod || typeof mod.type !== 'string' || !TYPE.test(mod.type))
    throw adapterError('adapter_package_invalid', 'the module must export type (lower-case letters, digits, _)');
  if (typeof mod.execute !== 'function') throw adapterError('adapter_package_invalid', 'the module must export execute(ctx)');
  const schema = mod.configSchema ?? { type: 'object', properties: {} };
  if (schema.type !== 'object' || typeof schema.properties !== 'object' || schema.properties === null)
    throw adapterError('adapter_package_invalid', 'configSchema must be { type: "object", properties }');
  return { module: mod, info, dir, label: typeof mod.label === 'string' ? mod.label : mod.type, configSchema: schema };
}

/** The heartbeat executor of an external adapter: calls its execute() in this process. */
export function externalExecutor(a: LoadedAdapter): AdapterExecutor {
  const mod = a.module;
  return {
    type: mod.type,
    // a package describes its label and config schema; it runs in this process (no skill files, no model calls of ours to trace)
    description: { label: a.label, configSchema: a.configSchema, skills: 'unsupported', genAiSystem: null },
    validateConfig: (config) => (typeof mod.validateConfig === 'function' ? mod.validateConfig(config) : []),
    testEnvironment: (config) =>
      typeof mod.testEnvironment === 'function' ? mod.testEnvironment(config) : Promise.resolve({ ok: true, checks: [] }),
    start(ctx: AdapterRunContext): AdapterRun {
      const abort = new AbortController();
      const done = (async (): Promise<RunOutcome> => {
        try {
          const out = await mod.execute({
            runId: ctx.runId,
            agentId: ctx.agentId,
            companyId: ctx.companyId,
            adapterType: ctx.adapterType,
            config: ctx.config,
            configEnv: ctx.configEnv,
            agent: ctx.agent,
            context: ctx.context,
            apiUrl: ctx.apiUrl,
            runToken: ctx.runToken,
            serviceEnv: ctx.serviceEnv,
            resumeSessionId: ctx.resumeSessionId,
            log: (stream, chunk) => ctx.log(stream === 'stderr' ? 'stderr' : 'stdout', String(chunk)),
            signal: abort.signal,
          });
          if (!out || !FINAL.includes(out.status))
            return { status: 'failed', errorCode: 'adapter_error', error: 'the adapter returned no final status' };
          return out;
        } catch (err) {
          return { status: 'failed', errorCode: 'adapter_error', error: (err as Error).message };
        }
      })();
      return { done, cancel: (reason) => abort.abort(reason) };
    },
  };
}
