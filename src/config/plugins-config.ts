import * as fs from 'node:fs';
import * as path from 'node:path';
import { pluginUserFromEnv, runningAsRoot, validatePluginUser } from './process-users';

/** Where installed plugin code lives by default when the service runs as root (see PluginSettings.installDir). */
export const ROOT_PLUGINS_DIR = '/var/lib/service-code/plugins';

/** Plugin runtime settings (SERVICE_PLUGINS_*). */
export interface PluginSettings {
  /** base URL of the npm registry used for `source: { npm }` installs (SERVICE_PLUGINS_NPM_REGISTRY) */
  npmRegistry: string;
  /** how often due plugin jobs and pending plugin events are looked for (SERVICE_PLUGINS_TICK_MS) */
  tickMs: number;
  /** roots a local-folder mount must lie under (SERVICE_PLUGINS_FOLDER_ROOTS, path-delimiter separated) */
  folderRoots: string[];
  /** directory scanned for bundled example plugins (SERVICE_PLUGINS_EXAMPLES_DIR) */
  examplesDir: string;
  /** default time limit of a tool call (SERVICE_PLUGINS_TOOL_TIMEOUT_MS) */
  toolTimeoutMs: number;
  /**
   * where installed packages are sealed (SERVICE_PLUGINS_DIR). Unset: as root
   * `/var/lib/service-code/plugins` (outside the 0700 data directory, which workers must not enter,
   * and outside every agent's or worker's home); otherwise `<data dir>/plugins` (workers run as
   * the service's user then). The directory and everything in it is owned by the service, not
   * writable by anyone else, and readable by the plugin worker group only.
   */
  installDir: string;
  /** the system user plugin workers run as when the service is root (SERVICE_PLUGIN_USER, default `service-plugin`) */
  workerUser: string;
}

export function loadPluginSettings(env: NodeJS.ProcessEnv, dataDir: string): PluginSettings {
  const int = (name: string, def: number, min: number, max: number) => {
    const raw = env[name]?.trim();
    if (!raw) return def;
    const n = Number(raw);
    if (!Number.isInteger(n) || n < min || n > max) throw new Error(`${name} must be an integer between ${min} and ${max}`);
    return n;
  };
  const userProblem = validatePluginUser(env);
  if (userProblem) throw new Error(userProblem);
  const roots = (env.SERVICE_PLUGINS_FOLDER_ROOTS ?? '')
    .split(path.delimiter)
    .map((s) => s.trim())
    .filter(Boolean);
  return {
    npmRegistry: (env.SERVICE_PLUGINS_NPM_REGISTRY?.trim() || 'https://registry.npmjs.org').replace(/\/+$/, ''),
    tickMs: int('SERVICE_PLUGINS_TICK_MS', 1000, 50, 3_600_000),
    folderRoots: (roots.length ? roots : [path.join(dataDir, 'plugin-folders')]).map((r) => path.resolve(r)),
    examplesDir: path.resolve(env.SERVICE_PLUGINS_EXAMPLES_DIR?.trim() || findExamplesDir()),
    installDir: env.SERVICE_PLUGINS_DIR?.trim()
      ? path.resolve(env.SERVICE_PLUGINS_DIR.trim())
      : runningAsRoot()
        ? ROOT_PLUGINS_DIR
        : path.join(dataDir, 'plugins'),
    workerUser: pluginUserFromEnv(env),
    toolTimeoutMs: int('SERVICE_PLUGINS_TOOL_TIMEOUT_MS', 10_000, 10, 600_000),
  };
}

/** `examples/plugins` of the checkout: the nearest ancestor of this file that has one (src/ under ts, dist/src/ when built). */
function findExamplesDir(): string {
  let dir = __dirname;
  for (let i = 0; i < 5; i++) {
    const candidate = path.join(dir, 'examples', 'plugins');
    if (fs.existsSync(candidate)) return candidate;
    dir = path.dirname(dir);
  }
  return path.join(__dirname, '..', '..', 'examples', 'plugins');
}
