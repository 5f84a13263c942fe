import * as os from 'node:os';
import * as path from 'node:path';

/**
 * Where user-supplied local paths may point (issue 27): project workspace `cwd`s and local-path
 * imports stay under SERVICE_WORKSPACE_ROOTS (colon-separated absolute folders; default: the
 * service user's home folder (not as root), the temporary folder and /srv, never `/`). The data directory, the
 * key files and the install folders of adapters, plugins and backups are refused even under a root.
 */
export interface PathRootSettings {
  roots: string[];
  /** never allowed, even inside a root */
  protectedPaths: string[];
}

/**
 * The service user's home folder (not itself: only folders in it), the temporary folder and /srv.
 * As root the home is no root at all: root's home holds the operator's own keys and logins.
 */
export function defaultWorkspaceRoots(): string[] {
  const home = os.homedir();
  const withHome = home && home !== '/' && process.getuid?.() !== 0;
  return [...new Set([...(withHome ? [home] : []), os.tmpdir(), '/srv'].map((p) => path.resolve(p)))];
}

export function loadPathRootSettings(env: NodeJS.ProcessEnv, protectedPaths: Array<string | undefined>): PathRootSettings {
  const raw = env.SERVICE_WORKSPACE_ROOTS?.trim();
  let roots: string[];
  if (raw) {
    roots = raw
      .split(':')
      .map((s) => s.trim())
      .filter(Boolean);
    const bad = roots.find((r) => !path.isAbsolute(r));
    if (bad !== undefined) throw new Error(`SERVICE_WORKSPACE_ROOTS must list absolute folders separated by ":", got "${bad}"`);
    roots = [...new Set(roots.map((r) => path.resolve(r)))];
  } else {
    roots = defaultWorkspaceRoots();
  }
  return {
    roots,
    protectedPaths: [...new Set(protectedPaths.filter((p): p is string => !!p && p.trim() !== '').map((p) => path.resolve(p)))],
  };
}
