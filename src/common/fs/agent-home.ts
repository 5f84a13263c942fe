import * as fs from 'node:fs';
import * as path from 'node:path';
import { realPathOf } from '../paths/path-guard';
import { TenantDir, withDir } from './tenant-dir';

/**
 * What the service does in an agent's HOME for it (the coding-agent CLIs' settings, instructions and
 * skills), when the service is root and the HOME belongs to the agent's uid: the agent may have put
 * links, FIFOs or other files anywhere in it, so every step goes through descriptors opened without
 * following links (tenant-dir.ts), stays beneath the HOME, and gives what it makes to the agent with
 * fchown (a chown by path would follow a planted link). Reads are made with the agent's own rights.
 * Without an owner (the service is not root, or agents run as it) the plain file system is used:
 * there is no privilege to misuse.
 */
export interface HomeOwner {
  uid: number;
  gid: number;
  home: string;
}

const MAX_READ_BYTES = 4 * 1024 * 1024;

/** The path segments of `p` below the owner's HOME; throws when `p` is not inside it. */
function below(owner: HomeOwner, p: string): { home: string; segments: string[] } {
  const home = path.resolve(owner.home);
  const abs = path.resolve(p);
  if (!abs.startsWith(home + path.sep)) throw new Error(`${p} is outside the agent's home folder ${home}`);
  return { home: realPathOf(home), segments: path.relative(home, abs).split(path.sep) };
}

/** The folder `segments` below the HOME, created where missing (0700) and owned by the agent; throws when a part is not a folder. */
function openDirIn(owner: HomeOwner, home: string, segments: string[]): TenantDir {
  let cur = TenantDir.open(home, { rights: null });
  for (const s of segments) {
    const next = cur.mkdir(s, 0o700);
    cur.close();
    if (!next) throw new Error(`${path.join(home, ...segments)} is not a folder (a link or a file is in the way)`);
    next.chown(owner.uid, owner.gid);
    cur = next;
  }
  return cur;
}

/** `dir` (inside the HOME) exists as a folder of the agent's. */
export function ensureDirIn(owner: HomeOwner | null, dir: string): void {
  if (!owner) {
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
    return;
  }
  const { home, segments } = below(owner, dir);
  openDirIn(owner, home, segments).close();
}

/** Writes `file` (inside the HOME) as the agent's, replacing what was there (never through a link). */
export function writeFileIn(owner: HomeOwner | null, file: string, content: string, mode = 0o600): void {
  if (!owner) {
    fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
    fs.writeFileSync(file, content, { mode });
    return;
  }
  const { home, segments } = below(owner, file);
  withDir(openDirIn(owner, home, segments.slice(0, -1)), (d) => d.writeFile(segments[segments.length - 1], content, mode, owner));
}

/** Removes `p` (inside the HOME), a file or a whole folder, through descriptors. */
export function removeIn(owner: HomeOwner | null, p: string): void {
  if (!owner) {
    fs.rmSync(p, { recursive: true, force: true });
    return;
  }
  const { home, segments } = below(owner, p);
  let dir: TenantDir | null;
  try {
    dir = withDir(TenantDir.open(home, { rights: null }), (h) => h.walk(segments.slice(0, -1)));
  } catch {
    return;
  }
  if (dir) withDir(dir, (d) => d.remove(segments[segments.length - 1]));
}

/**
 * Copies the folder `source` (read with the agent's rights: it may be the agent's run scratch) to
 * `dest` (inside the HOME, replaced), as the agent's files.
 */
export function copyTreeIn(owner: HomeOwner | null, source: string, dest: string): void {
  if (!owner) {
    fs.rmSync(dest, { recursive: true, force: true });
    fs.cpSync(source, dest, { recursive: true });
    return;
  }
  const { home, segments } = below(owner, dest);
  const rights = { uid: owner.uid, gids: [owner.gid] };
  withDir(TenantDir.open(realPathOf(source), { rights }), (from) =>
    withDir(openDirIn(owner, home, segments.slice(0, -1)), (parent) => {
      const name = segments[segments.length - 1];
      parent.remove(name);
      const to = parent.mkdir(name, 0o700);
      if (!to) throw new Error(`${dest} could not be created`);
      withDir(to, (t) => copyInto(from, t, owner, 0));
    }),
  );
}

function copyInto(from: TenantDir, to: TenantDir, owner: HomeOwner, depth: number): void {
  to.chown(owner.uid, owner.gid);
  if (depth > 16) return;
  for (const e of from.entries()) {
    if (e.type === 'dir') {
      const src = from.dir(e.name);
      const dst = src ? to.mkdir(e.name, 0o700) : null;
      if (src && dst) withDir(src, (s) => withDir(dst, (d) => copyInto(s, d, owner, depth + 1)));
      else src?.close();
    } else if (e.type === 'file') {
      const r = from.readFile(e.name, MAX_READ_BYTES);
      if (r.kind === 'read') to.writeFile(e.name, r.bytes, (from.modeOf(e.name) ?? 0o600) & 0o700, owner);
    }
  }
}

/** Reads `file` with the agent's own rights (any path; nothing it could not read itself, no link swapped in meanwhile). */
export function readAsOwner(owner: HomeOwner | null, file: string): string {
  if (!owner) return fs.readFileSync(file, 'utf8');
  const abs = path.resolve(file);
  const r = withDir(TenantDir.open(realPathOf(path.dirname(abs)), { rights: { uid: owner.uid, gids: [owner.gid] } }), (d) =>
    d.readFile(path.basename(abs), MAX_READ_BYTES),
  );
  if (r.kind === 'read') return r.bytes.toString('utf8');
  if (r.kind === 'oversized') throw new Error(`${file} is larger than ${MAX_READ_BYTES} bytes`);
  throw Object.assign(new Error(`${file}: ${r.why === 'missing' ? 'no such file' : `not read (${r.why})`}`), {
    code: r.why === 'missing' ? 'ENOENT' : 'EINVAL',
  });
}

/**
 * Reads `file` the service's own way but without following a link at any level and only when it is a
 * regular file with one link (a settings file in a HOME whose owner is not known here).
 */
export function readNoFollow(file: string): string {
  const abs = path.resolve(file);
  const r = withDir(TenantDir.open(realPathOf(path.dirname(abs)), { rights: null }), (d) => d.readFile(path.basename(abs), MAX_READ_BYTES));
  if (r.kind === 'read') return r.bytes.toString('utf8');
  throw Object.assign(new Error(`${file} not read (${r.kind === 'oversized' ? 'too large' : r.why})`), {
    code: r.kind === 'skipped' && r.why === 'missing' ? 'ENOENT' : 'EINVAL',
  });
}
