import * as fs from 'node:fs';
import * as path from 'node:path';
import type { PathRootSettings } from '../../config/path-roots-config';

/**
 * User-supplied local paths (workspace `cwd`s, local-path imports) stay under the operator's
 * roots (SERVICE_WORKSPACE_ROOTS), judged after `..` and symbolic links are resolved, and never
 * reach the data directory or the key files. When the service runs as root, a local source is read
 * only if any user could read it: agents run under unprivileged uids, and an import must not hand
 * them what only root can read.
 */

export type PathRefusalReason = 'outside_roots' | 'protected' | 'not_readable_by_others';

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

/** Whether the service process runs as root (reads then must be limited to what others may read). */
export const serviceIsRoot = (): boolean => process.getuid?.() === 0;

export class PathGuard {
  constructor(private readonly settings: PathRootSettings) {}

  /** The real form of `p` if it lies under a root and outside the protected paths; else PathRefusedError. */
  assertAllowed(p: string, what = 'path'): string {
    if (!path.isAbsolute(p)) throw new PathRefusedError('outside_roots', `The ${what} must be an absolute path`);
    const real = realPathOf(p);
    if (this.isProtected(real)) {
      throw new PathRefusedError('protected', `The ${what} ${p} is inside the service's own data or key files`);
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
    return this.settings.protectedPaths.some((x) => inside(realPathOf(x), real));
  }

  /**
   * For reads on behalf of agents while the service is root: `p` (a real path) must be readable by
   * "others", and every folder above it searchable by them. Throws PathRefusedError naming `shown`.
   */
  assertReadableByOthers(real: string, shown: string = real): void {
    if (!serviceIsRoot()) return;
    const st = fs.statSync(real);
    const need = st.isDirectory() ? 0o005 : 0o004;
    if ((st.mode & need) !== need) throw notReadable(shown);
    for (let dir = path.dirname(real); ; dir = path.dirname(dir)) {
      if ((fs.statSync(dir).mode & 0o001) === 0) throw notReadable(shown);
      if (path.dirname(dir) === dir) break;
    }
  }

  /**
   * A check for walks of a local source: protected entries are skipped (false), entries not
   * readable by others refuse the read (root service), everything else is read (true).
   */
  entryCheck(rootShown: string): (real: string, rel: string) => boolean {
    return (real, rel) => {
      if (this.isProtected(real)) return false;
      if (serviceIsRoot()) {
        const st = fs.statSync(real);
        const need = st.isDirectory() ? 0o005 : 0o004;
        if ((st.mode & need) !== need) throw notReadable(rel ? `${rootShown}/${rel}` : rootShown);
      }
      return true;
    };
  }
}

const notReadable = (p: string) =>
  new PathRefusedError(
    'not_readable_by_others',
    `${p} is not readable by other users; local sources are read only as an unprivileged agent could read them`,
  );
