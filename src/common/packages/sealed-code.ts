import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';

/**
 * Sealed code: installed plugin and external adapter packages. A package is copied (never used in
 * place) into a directory owned by the service, made read-only to everyone else (directories 0750,
 * files 0640, or 0750 when they were executable, group = the identity that runs it), and its tree
 * hash is recorded; the hash is checked again before the code runs.
 */
export interface CodeOwner {
  uid: number;
  gid: number;
}

/** a local source with more entries than this is refused (a package, not a file system) */
const MAX_SOURCE_ENTRIES = 100_000;

/** What `verifyCode` reports when the tree changed. */
export const CODE_TAMPERED_MESSAGE = 'installed code changed since install (hash mismatch)';

const own = (): CodeOwner => ({ uid: process.getuid?.() ?? 0, gid: process.getgid?.() ?? 0 });
/** owners a source may have: root and the service's user */
const trustedUid = (uid: number) => uid === 0 || uid === own().uid;
/** groups that may have write access to a source: root's and the service's own */
const trustedGid = (gid: number) => gid === 0 || gid === own().gid;

/** Why the entry is writable by someone other than root or the service (null: it is not). */
function writableByOthers(p: string, st: fs.Stats): string | null {
  if (!trustedUid(st.uid)) return `${p} is owned by uid ${st.uid}, not by root or the service`;
  if (st.isSymbolicLink()) return null;
  const sticky = (st.mode & 0o1000) !== 0 && st.isDirectory();
  if (st.mode & 0o002 && !sticky) return `${p} is writable by others (mode ${(st.mode & 0o7777).toString(8)})`;
  if (st.mode & 0o020 && !sticky && !trustedGid(st.gid))
    return `${p} is writable by group ${st.gid} (mode ${(st.mode & 0o7777).toString(8)})`;
  return null;
}

/**
 * Why a local install source (folder or tarball) is not safe to install from, or null: it (after
 * symlinks), any file or folder inside it, or any folder above it is owned by another user or
 * writable by others (o+w, or g+w for a group other than root's or the service's). A sticky
 * world-writable folder above it (like /tmp) is fine: its entries can only be replaced by their owners.
 * Callers check that a folder looks like a package first (its marker file): this walks all of it.
 */
export function insecureSourceReason(source: string): string | null {
  let real: string;
  try {
    real = fs.realpathSync(path.resolve(source));
  } catch {
    return null; // a missing source is reported by the installer
  }
  for (let cur = path.dirname(real); ; cur = path.dirname(cur)) {
    const why = writableByOthers(cur, fs.statSync(cur));
    if (why) return why;
    if (path.dirname(cur) === cur) break;
  }
  let entries = 0;
  const walk = (p: string): string | null => {
    if (++entries > MAX_SOURCE_ENTRIES) return `${source} holds more than ${MAX_SOURCE_ENTRIES} files and folders`;
    const st = fs.lstatSync(p);
    const why = writableByOthers(p, st);
    if (why) return why;
    if (st.isDirectory()) {
      for (const name of fs.readdirSync(p)) {
        const inner = walk(path.join(p, name));
        if (inner) return inner;
      }
    }
    return null;
  };
  return walk(real);
}

/** Why a package tree holds something that cannot be sealed (a symlink leading out, a device…), or null. */
export function unsealableReason(root: string): string | null {
  const base = path.resolve(root);
  const walk = (dir: string): string | null => {
    for (const name of fs.readdirSync(dir)) {
      const p = path.join(dir, name);
      const st = fs.lstatSync(p);
      const rel = path.relative(base, p);
      if (st.isSymbolicLink()) {
        const target = fs.readlinkSync(p);
        const resolved = path.resolve(dir, target);
        if (path.isAbsolute(target) || (resolved !== base && !resolved.startsWith(base + path.sep)))
          return `symlink ${rel} points outside the package`;
      } else if (st.isDirectory()) {
        const inner = walk(p);
        if (inner) return inner;
      } else if (!st.isFile()) return `${rel} is not a regular file or folder`;
    }
    return null;
  };
  return walk(base);
}

/**
 * Copies a local folder into `dest` (an empty directory): regular files and folders, symlinks that
 * stay inside the folder (as they are); `.git` is left out. Throws `fail` for anything else.
 */
export function copySource(source: string, dest: string, fail: (message: string) => Error): void {
  const base = fs.realpathSync(path.resolve(source));
  const bad = unsealableReason(base);
  if (bad) throw fail(`Cannot install from ${source}: ${bad}`);
  const walk = (from: string, to: string) => {
    for (const name of fs.readdirSync(from)) {
      if (name === '.git') continue;
      const src = path.join(from, name);
      const dst = path.join(to, name);
      const st = fs.lstatSync(src);
      if (st.isSymbolicLink()) fs.symlinkSync(fs.readlinkSync(src), dst);
      else if (st.isDirectory()) {
        fs.mkdirSync(dst, { mode: 0o700 });
        walk(src, dst);
      } else fs.copyFileSync(src, dst);
    }
  };
  walk(base, dest);
}

/**
 * Makes a package tree read-only to everyone but its owner: owner `owner.uid`, group `owner.gid`
 * (the identity that runs the code reads through the group), directories 0750, files 0640 (0750
 * when executable). Symlinks keep their target and get the same owner.
 */
export function sealTree(root: string, owner: CodeOwner): void {
  const seal = (p: string) => {
    const st = fs.lstatSync(p);
    if (st.isSymbolicLink()) {
      fs.lchownSync(p, owner.uid, owner.gid);
      return;
    }
    if (st.isDirectory()) for (const name of fs.readdirSync(p)) seal(path.join(p, name));
    fs.chownSync(p, owner.uid, owner.gid);
    fs.chmodSync(p, st.isDirectory() || st.mode & 0o111 ? 0o750 : 0o640);
  };
  seal(path.resolve(root));
}

/**
 * sha256 over the sorted file tree: each folder, file (path and content hash) and symlink (path and
 * target), paths relative with `/`. Modes and owners are not part of it.
 */
export function hashTree(root: string): string {
  const base = path.resolve(root);
  const entries: string[] = [];
  const walk = (dir: string) => {
    for (const name of fs.readdirSync(dir).sort()) {
      const p = path.join(dir, name);
      const rel = path.relative(base, p).split(path.sep).join('/');
      const st = fs.lstatSync(p);
      if (st.isSymbolicLink()) entries.push(`L\0${rel}\0${fs.readlinkSync(p)}`);
      else if (st.isDirectory()) {
        entries.push(`D\0${rel}`);
        walk(p);
      } else entries.push(`F\0${rel}\0${createHash('sha256').update(fs.readFileSync(p)).digest('hex')}`);
    }
  };
  walk(base);
  entries.sort();
  const h = createHash('sha256');
  for (const e of entries) h.update(e + '\n');
  return h.digest('hex');
}

/** Whether the tree at `root` still has hash `expected` (a missing tree does not). */
export function codeIntact(root: string, expected: string): boolean {
  try {
    return hashTree(root) === expected;
  } catch {
    return false;
  }
}

/**
 * Creates (if needed) the root directory of sealed packages: owned by the service, group
 * `group` (who may read through it), mode 0750; folders created above it get 0755. Answers why a
 * folder above it is writable by others, or null.
 */
export function prepareCodeRoot(dir: string, group: number): string | null {
  const abs = path.resolve(dir);
  fs.mkdirSync(path.dirname(abs), { recursive: true, mode: 0o755 });
  fs.mkdirSync(abs, { recursive: true, mode: 0o750 });
  const me = own();
  const st = fs.statSync(abs);
  if (st.uid !== me.uid || st.gid !== group) fs.chownSync(abs, me.uid, group);
  if ((st.mode & 0o777) !== 0o750) fs.chmodSync(abs, 0o750);
  for (let cur = path.dirname(abs); ; cur = path.dirname(cur)) {
    const why = writableByOthers(cur, fs.statSync(cur));
    if (why) return why;
    if (path.dirname(cur) === cur) return null;
  }
}
