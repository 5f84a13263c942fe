import * as fs from 'node:fs';
import * as path from 'node:path';
import { PathRefusedError } from '../paths/path-guard';

/**
 * The one way the service reads, lists and writes files in folders a tenant controls (local skill
 * imports, project scans, persistent skill delivery into a workspace, plugin folders): through
 * directory descriptors, never through a path that is resolved again later.
 *
 * - Every folder is opened one component at a time from `/` with O_NOFOLLOW|O_DIRECTORY, each
 *   relative to the descriptor of its parent (`/proc/self/fd/<fd>/<name>`, Linux's openat), so a
 *   symbolic link swapped in for a folder or a file is never followed: the open fails (ELOOP or
 *   ENOTDIR) and the entry counts as gone.
 * - Files are opened with O_NOFOLLOW|O_NONBLOCK (a FIFO cannot block the service) and checked on
 *   the descriptor after opening: a regular file, one link (a hard link to someone else's file is
 *   not read), a real path (`/proc/self/fd/<fd>`) still beneath the walked root and outside the
 *   protected paths, and a mode that lets the tenant read it.
 * - When the service runs as root, every folder entered or listed and every file read must be
 *   allowed by its mode bits to the tenant's identity (`Rights`: the kernel's owner/group/others
 *   decision for an unprivileged process), so nothing is read for a tenant that the tenant's own
 *   processes could not read. ACLs are not consulted (they can only narrow what the bits give here
 *   to groups and users that are not the tenant's).
 * - Writes (skill delivery into a workspace) create with O_CREAT|O_EXCL|O_NOFOLLOW after removing
 *   what was there, and removals walk descriptors too: nothing outside the folder is ever written,
 *   truncated or deleted, whatever the tenant swaps in meanwhile.
 *
 * An entry that vanishes or changes kind during a walk is skipped; a folder or file the tenant may
 * not read refuses the whole operation (PathRefusedError, 422 `path_not_allowed`).
 */

/** Whose rights a read is made with: `uid` (null: no particular user) and groups (a company's group). */
export interface Rights {
  uid: number | null;
  gids: number[];
}

/** Any user's rights (the mode bits for others). */
export const OTHERS: Rights = { uid: null, gids: [] };

export interface TreeScope {
  /** null: no mode checks (the service is not root: its agents run as its own user and read what it reads) */
  rights: Rights | null;
  /** paths never entered or read (the service's data and key files) */
  isProtected?: (real: string) => boolean;
}

/** What a read of one file gave. */
export type FileRead =
  | { kind: 'read'; bytes: Buffer; size: number }
  | { kind: 'oversized'; size: number }
  | { kind: 'skipped'; why: 'missing' | 'not_a_file' | 'hard_link' | 'outside' };

export type EntryType = 'file' | 'dir' | 'symlink' | 'other';

/** The path is gone (or is not a folder). */
export class FsMissingError extends Error {
  readonly code = 'not_found';
}

const O = fs.constants;
const DIR_FLAGS = O.O_RDONLY | O.O_DIRECTORY | O.O_NOFOLLOW;
const FILE_FLAGS = O.O_RDONLY | O.O_NOFOLLOW | O.O_NONBLOCK;
const PROC_FD = '/proc/self/fd';
/** Linux: descriptors are reachable as /proc/self/fd/<n> (openat); elsewhere the walked path is used. */
const HAS_PROC_FD = (() => {
  try {
    return fs.statSync(PROC_FD).isDirectory();
  } catch {
    return false;
  }
})();

const READ = 0o4;
const SEARCH = 0o1;

const inside = (root: string, p: string) => p === root || p.startsWith(root === '/' ? '/' : root + path.sep);

/** Whether `rights` may do `bits` on an entry with these owner and mode (null rights: yes). */
export function permits(st: fs.Stats, bits: number, rights: Rights | null): boolean {
  if (!rights) return true;
  const shift = rights.uid !== null && st.uid === rights.uid ? 6 : rights.gids.includes(st.gid) ? 3 : 0;
  return ((st.mode >> shift) & bits) === bits;
}

const errno = (err: unknown) => (err as NodeJS.ErrnoException).code;
const safeClose = (fd: number) => {
  try {
    fs.closeSync(fd);
  } catch {
    /* already closed */
  }
};

const notReadable = (shown: string) =>
  new PathRefusedError(
    'not_readable_by_others',
    `${shown} is not readable by the company's agents; local sources are read only as they could read them`,
  );

/** An open folder of a tenant's tree. Close it (or use `withDir`). */
export class TenantDir {
  private closed = false;

  private constructor(
    private readonly fd: number,
    /** the real path it was opened at */
    readonly path: string,
    /** the root of the walk (nothing outside it is read) */
    readonly root: string,
    private readonly scope: TreeScope,
  ) {}

  /**
   * Opens `realPath` (absolute, symbolic links already resolved) component by component from `/`:
   * every folder on the way must be enterable by the tenant, the folder itself readable. Throws
   * FsMissingError when it is gone or not a folder, PathRefusedError when the tenant may not read
   * it or a component was swapped for a link. `root` bounds later reads (default: the folder itself).
   */
  static open(realPath: string, scope: TreeScope, root = realPath): TenantDir {
    if (!path.isAbsolute(realPath)) throw new FsMissingError(`${realPath} is not an absolute path`);
    const parts = path.resolve(realPath).split(path.sep).filter(Boolean);
    let fd = fs.openSync('/', DIR_FLAGS);
    let cur = '/';
    try {
      for (const name of parts) {
        if (!permits(fs.fstatSync(fd), SEARCH, scope.rights)) throw notReadable(realPath);
        const next = openAt(fd, cur, name, DIR_FLAGS);
        if (typeof next === 'string') {
          if (next === 'missing' || next === 'not_a_dir') throw new FsMissingError(`${realPath} does not exist or is not a folder`);
          throw new PathRefusedError('changed', `${realPath} changed while it was opened (a link was swapped in)`);
        }
        safeClose(fd);
        fd = next;
        cur = path.join(cur, name);
      }
      if (!permits(fs.fstatSync(fd), READ | SEARCH, scope.rights)) throw notReadable(realPath);
      return new TenantDir(fd, cur, path.resolve(root), scope);
    } catch (err) {
      safeClose(fd);
      throw err;
    }
  }

  private get via(): string {
    return HAS_PROC_FD ? `${PROC_FD}/${this.fd}` : this.path;
  }

  private shown(name: string): string {
    return path.join(this.path, name);
  }

  /** The folder's own owner and mode (fstat of its descriptor). */
  stat(): fs.Stats {
    return fs.fstatSync(this.fd);
  }

  /** The entries (name and type as listed; each is checked again when opened). */
  entries(): Array<{ name: string; type: EntryType }> {
    let list: fs.Dirent[];
    try {
      list = fs.readdirSync(this.via, { withFileTypes: true });
    } catch {
      return [];
    }
    return list.map((e) => ({
      name: e.name,
      type: e.isSymbolicLink() ? 'symlink' : e.isDirectory() ? 'dir' : e.isFile() ? 'file' : 'other',
    }));
  }

  /**
   * The sub-folder `name`, or null when it is gone, not a folder (a link included) or protected.
   * Throws PathRefusedError when the tenant may not list it.
   */
  dir(name: string): TenantDir | null {
    if (!isName(name) || this.isProtected(this.shown(name))) return null;
    const fd = openAt(this.fd, this.path, name, DIR_FLAGS);
    if (typeof fd === 'string') return null;
    try {
      if (!this.stillInside(fd)) {
        safeClose(fd);
        return null;
      }
      if (!permits(fs.fstatSync(fd), READ | SEARCH, this.scope.rights)) throw notReadable(this.shown(name));
    } catch (err) {
      safeClose(fd);
      throw err;
    }
    return new TenantDir(fd, this.shown(name), this.root, this.scope);
  }

  /** What kind of entry `name` is now (lstat through the folder's descriptor), or null when it is gone. */
  typeOf(name: string): EntryType | null {
    if (!isName(name)) return null;
    try {
      const st = fs.lstatSync(`${this.via}/${name}`);
      return st.isSymbolicLink() ? 'symlink' : st.isDirectory() ? 'dir' : st.isFile() ? 'file' : 'other';
    } catch {
      return null;
    }
  }

  /** The permission bits of `name` (not following a link), or null when it is gone. */
  modeOf(name: string): number | null {
    if (!isName(name)) return null;
    try {
      return fs.lstatSync(`${this.via}/${name}`).mode & 0o7777;
    } catch {
      return null;
    }
  }

  /** The target of the symbolic link `name` (not followed), or null. */
  linkTarget(name: string): string | null {
    if (!isName(name)) return null;
    try {
      return fs.readlinkSync(`${this.via}/${name}`);
    } catch {
      return null;
    }
  }

  /**
   * Reads the file `name`, at most `limit` bytes (larger: `oversized`, or with `truncate` its first
   * `limit` bytes and its whole size), checked on its descriptor.
   */
  readFile(name: string, limit: number, truncate = false): FileRead {
    if (!isName(name)) return { kind: 'skipped', why: 'missing' };
    if (this.isProtected(this.shown(name))) return { kind: 'skipped', why: 'outside' };
    const fd = openAt(this.fd, this.path, name, FILE_FLAGS);
    if (typeof fd === 'string') return { kind: 'skipped', why: fd === 'missing' ? 'missing' : 'not_a_file' };
    try {
      const st = fs.fstatSync(fd);
      if (!st.isFile()) return { kind: 'skipped', why: 'not_a_file' };
      if (st.nlink !== 1) return { kind: 'skipped', why: 'hard_link' };
      if (!permits(st, READ, this.scope.rights)) throw notReadable(this.shown(name));
      if (!this.stillInside(fd)) return { kind: 'skipped', why: 'outside' };
      if (st.size > limit && !truncate) return { kind: 'oversized', size: st.size };
      const buf = Buffer.alloc(Math.min(limit + 1, st.size + 1));
      let total = 0;
      for (;;) {
        if (total === buf.length) break;
        const n = fs.readSync(fd, buf, total, buf.length - total, total);
        if (n === 0) break;
        total += n;
      }
      if (total > limit) {
        if (!truncate) return { kind: 'oversized', size: total };
        return { kind: 'read', bytes: buf.subarray(0, limit), size: Math.max(st.size, total) };
      }
      return { kind: 'read', bytes: buf.subarray(0, total), size: total };
    } finally {
      safeClose(fd);
    }
  }

  /**
   * Opens a path relative to this folder (segments, no `.`/`..`), component by component without
   * following links: the folder, or the file's parent folder and its name. Null when any part is
   * gone, a link or not a folder.
   */
  walk(segments: string[]): TenantDir | null {
    let cur: TenantDir | null = this.dir('.') ?? null;
    for (const s of segments) {
      if (!cur) return null;
      const next: TenantDir | null = cur.dir(s);
      cur.close();
      cur = next;
    }
    return cur;
  }

  // ---------------------------------------------------------------- writes

  /** Creates the sub-folder `name` (kept when it exists as a folder) and opens it; null when something else is there. */
  mkdir(name: string, mode: number): TenantDir | null {
    if (!isName(name)) return null;
    try {
      fs.mkdirSync(`${this.via}/${name}`, { mode });
    } catch (err) {
      if (errno(err) !== 'EEXIST') throw err;
    }
    return this.dir(name);
  }

  /** Replaces the file `name` with `data`: what was there is removed, the new file created exclusively (never through a link). */
  writeFile(name: string, data: Buffer | string, mode: number, owner?: { uid: number; gid: number }): void {
    if (!isName(name)) throw new Error(`not a file name: ${name}`);
    for (let attempt = 0; ; attempt++) {
      this.remove(name);
      let fd: number;
      try {
        fd = fs.openSync(`${this.via}/${name}`, O.O_WRONLY | O.O_CREAT | O.O_EXCL | O.O_NOFOLLOW, mode);
      } catch (err) {
        // something was put back between the removal and the create: try again, then give up
        if (errno(err) === 'EEXIST' && attempt < 5) continue;
        throw err;
      }
      try {
        fs.writeFileSync(fd, data);
        if (owner) fs.fchownSync(fd, owner.uid, owner.gid);
        fs.fchmodSync(fd, mode);
      } finally {
        safeClose(fd);
      }
      return;
    }
  }

  /** Removes `name` (a file, a link or a whole folder), through descriptors: never anything outside this folder. */
  remove(name: string): void {
    if (!isName(name)) return;
    const at = `${this.via}/${name}`;
    try {
      fs.unlinkSync(at);
      return;
    } catch (err) {
      const code = errno(err);
      if (code === 'ENOENT') return;
      if (code !== 'EISDIR' && code !== 'EPERM') throw err;
    }
    const sub = this.dir(name);
    if (sub) {
      try {
        for (const e of sub.entries()) sub.remove(e.name);
      } finally {
        sub.close();
      }
    }
    try {
      fs.rmdirSync(at);
    } catch (err) {
      if (errno(err) !== 'ENOENT') throw err;
    }
  }

  /** Gives this folder (and, with `recursive`, everything in it) to `uid:gid`, through descriptors. */
  chown(uid: number, gid: number, recursive = false): void {
    fs.fchownSync(this.fd, uid, gid);
    if (!recursive) return;
    for (const e of this.entries()) {
      if (e.type === 'dir') {
        const sub = this.dir(e.name);
        if (!sub) continue;
        try {
          sub.chown(uid, gid, true);
        } finally {
          sub.close();
        }
      } else if (e.type === 'file') {
        const fd = openAt(this.fd, this.path, e.name, FILE_FLAGS);
        if (typeof fd === 'string') continue;
        try {
          if (fs.fstatSync(fd).isFile()) fs.fchownSync(fd, uid, gid);
        } finally {
          safeClose(fd);
        }
      }
    }
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    safeClose(this.fd);
  }

  private isProtected(p: string): boolean {
    return !!this.scope.isProtected?.(p);
  }

  /** The descriptor's real path (Linux) is still beneath the root and not protected. */
  private stillInside(fd: number): boolean {
    if (!HAS_PROC_FD) return true;
    let real: string;
    try {
      real = fs.readlinkSync(`${PROC_FD}/${fd}`);
    } catch {
      return false;
    }
    return inside(this.root, real) && !this.isProtected(real);
  }
}

/** A single path segment (no separators, not `..`); `.` names the folder itself. */
const isName = (name: string) => name.length > 0 && name !== '..' && !name.includes('/') && !name.includes('\0');

/** open(2) of `name` relative to the folder `dirFd`; a string says why not. */
function openAt(dirFd: number, dirPath: string, name: string, flags: number): number | 'missing' | 'link' | 'not_a_dir' {
  try {
    return fs.openSync(HAS_PROC_FD ? `${PROC_FD}/${dirFd}/${name}` : path.join(dirPath, name), flags);
  } catch (err) {
    const code = errno(err);
    if (code === 'ENOENT') return 'missing';
    if (code === 'ELOOP' || code === 'EMLINK') return 'link';
    if (code === 'ENOTDIR') return 'not_a_dir';
    if (code === 'EACCES' || code === 'EPERM')
      throw new PathRefusedError('not_readable_by_others', `${path.join(dirPath, name)} cannot be opened`);
    throw err;
  }
}

/** Runs `fn` with `dir` and closes it after. */
export function withDir<T>(dir: TenantDir, fn: (d: TenantDir) => T): T {
  try {
    return fn(dir);
  } finally {
    dir.close();
  }
}
