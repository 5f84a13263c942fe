import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { PathRootSettings } from '../../config/path-roots-config';

/**
 * User-supplied local paths (workspace `cwd`s, local-path imports) stay under the operator's
 * roots (SERVICE_WORKSPACE_ROOTS), judged after `..` and symbolic links are resolved, and never
 * reach the data directory or the key files, the data directory of any other instance on the host
 * (found by its key files), or the service user's home folder itself. What is then read there is read through
 * common/fs/tenant-dir (descriptors, the tenant's rights), never through the path again.
 */

export type PathRefusalReason = 'outside_roots' | 'protected' | 'not_readable_by_others' | 'changed';

export class PathRefusedError extends Error {
  readonly code = 'path_not_allowed';
  constructor(
    readonly reason: PathRefusalReason,
    message: string,
  ) {
    super(message);
  }
}

const inside = (root: string, p: string) => p === root || p.startsWith(root.endsWith(path.sep) ? root : root + path.sep);

/**
 * The real path of `p`: `..` resolved, and symbolic links of the longest existing prefix followed
 * (a workspace may name a folder that does not exist yet).
 */
export function realPathOf(p: string): string {
  const abs = path.resolve(p);
  const rest: string[] = [];
  let cur = abs;
  for (;;) {
    try {
      return path.join(fs.realpathSync(cur), ...rest);
    } catch {
      const parent = path.dirname(cur);
      if (parent === cur) return abs;
      rest.unshift(path.basename(cur));
      cur = parent;
    }
  }
}

/** Files only a service data directory holds (any instance's, any version): `keys/<name>`. */
const DATA_DIR_MARKERS = ['secrets-master-key', 'jwt-secret', 'audit-signing-key'];

/** The folder at or above `real` that is the data directory of some instance of the service, or null. */
export function enclosingDataDir(real: string): string | null {
  for (let dir = real; ; dir = path.dirname(dir)) {
    if (DATA_DIR_MARKERS.some((m) => fs.existsSync(path.join(dir, 'keys', m)))) return dir;
    if (path.dirname(dir) === dir) return null;
  }
}

export class PathGuard {
  constructor(private readonly settings: PathRootSettings) {}

  /** The real form of `p` if it lies under a root and outside the protected paths; else PathRefusedError. */
  assertAllowed(p: string, what = 'path'): string {
    if (!path.isAbsolute(p)) throw new PathRefusedError('outside_roots', `The ${what} must be an absolute path`);
    const real = realPathOf(p);
    if (this.isProtected(real)) {
      throw new PathRefusedError('protected', `The ${what} ${p} is inside the service's own data or key files`);
    }
    if (real === realPathOf(os.homedir())) {
      throw new PathRefusedError('protected', `The ${what} ${p} is the service user's home folder`);
    }
    const dataDir = enclosingDataDir(real);
    if (dataDir) {
      throw new PathRefusedError('protected', `The ${what} ${p} is inside the data directory of a service instance (${dataDir})`);
    }
    const roots = this.settings.roots.map(realPathOf);
    if (!roots.some((r) => inside(r, real))) {
      throw new PathRefusedError(
        'outside_roots',
        `The ${what} ${p} is outside the folders this service allows (SERVICE_WORKSPACE_ROOTS: ${this.settings.roots.join(':')})`,
      );
    }
    return real;
  }

  /** assertAllowed as a yes/no. */
  allows(p: string): boolean {
    try {
      this.assertAllowed(p);
      return true;
    } catch {
      return false;
    }
  }

  /** The path (real form) is, or is inside, one of the protected paths. */
  isProtected(real: string): boolean {
    return this.protectedCheck()(real);
  }

  /** isProtected with the protected paths resolved once (for the many entries of a walk). */
  protectedCheck(): (real: string) => boolean {
    const reals = this.settings.protectedPaths.map(realPathOf);
    return (real) => reals.some((x) => inside(x, real));
  }
}
