import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { TenantDir, TreeScope, withDir } from '../../common/fs/tenant-dir';
import { realPathOf } from '../../common/paths/path-guard';
import type { SkillDelivery } from '../adapters/adapter.types';
import { isSafeRelativePath, shortHash, SKILL_MD, StoredSkillFile } from './skill-files';

/**
 * How skills reach an agent's runs. Each adapter's executor says how (`description.skills`):
 *
 * - `ephemeral` (`process`, the coding-agent CLIs): before each run the agent's skills are written
 *   to a fresh folder (the run's scratch `skills/`, or `$TMPDIR/service-run-skills/<runId>/`), named
 *   by SERVICE_SKILLS_DIR, and removed when the run ends. A coding CLI's runtime copies that folder
 *   into the CLI's own skills folder in the agent's home (e.g. `~/.claude/skills/`) for the run.
 * - `persistent_in_cwd` (the generic JSON-lines CLIs `runtime_a_local` … `runtime_g`): persistent
 *   when the agent has a `cwd`: kept in `<cwd>/.service/skills/<runtimeName>/`, updated before each
 *   run, with a manifest of what the service manages; folders the service did not write are left
 *   alone (reported as user_installed / external_unknown). Without a `cwd`: ephemeral as above.
 * - `unsupported` (`http`, `gateway_a`, external adapters, a type with no executor here): a remote
 *   cannot receive files; the assignment is recorded only.
 */
export type SkillSyncMode = 'persistent' | 'ephemeral' | 'unsupported';

export const SKILLS_DIR_ENV = 'SERVICE_SKILLS_DIR';
export const PERSISTENT_SUBDIR = path.join('.service', 'skills');
export const MANIFEST_FILE = '.service-managed.json';

/** The mode of an agent's skills: what its adapter delivers (undefined: no executor, unsupported), with its config. */
export function syncModeOf(delivery: SkillDelivery | undefined, config: Record<string, unknown>): SkillSyncMode {
  if (delivery === 'ephemeral') return 'ephemeral';
  if (delivery === 'persistent_in_cwd') return typeof config.cwd === 'string' && config.cwd.length > 0 ? 'persistent' : 'ephemeral';
  return 'unsupported';
}

export const ephemeralRoot = (): string => path.join(os.tmpdir(), 'service-run-skills');
export const ephemeralDirOf = (runId: string): string => path.join(ephemeralRoot(), runId.replace(/[^a-zA-Z0-9-]/g, ''));
export const persistentDirOf = (cwd: string): string => path.join(cwd, PERSISTENT_SUBDIR);

export interface DeliverableSkill {
  key: string;
  slug: string;
  contentHash: string;
  files: StoredSkillFile[];
}

/** Folder names of the delivered skills: the slug, disambiguated by a key hash when slugs repeat. */
export function runtimeNames(skills: Array<{ key: string; slug: string }>): Map<string, string> {
  const counts = new Map<string, number>();
  for (const s of skills) counts.set(s.slug, (counts.get(s.slug) ?? 0) + 1);
  return new Map(skills.map((s) => [s.key, (counts.get(s.slug) ?? 0) > 1 ? `${s.slug}-${shortHash(s.key).slice(0, 6)}` : s.slug]));
}

/** Where a run's private scratch is and who owns it (see common/process/agent-identities). */
export interface RunScratchTarget {
  dir: string;
  uid: number | null;
  gid: number | null;
}

/**
 * A fresh folder with every skill; returns it. With the run's scratch: `<scratch>/skills`, private
 * to the run's identity (0700/0600) and removed with the scratch; without: the legacy shared root.
 * Written through descriptors: the scratch belongs to the agent's uid.
 */
export function materialiseEphemeral(runId: string, skills: DeliverableSkill[], scratch?: RunScratchTarget): string {
  const parentPath = scratch ? scratch.dir : ephemeralRoot();
  const name = scratch ? 'skills' : runId.replace(/[^a-zA-Z0-9-]/g, '');
  if (!scratch) {
    fs.mkdirSync(parentPath, { recursive: true, mode: 0o755 });
    // a shared folder in the temporary directory: it must be the service's own, not a link planted there
    const st = fs.lstatSync(parentPath);
    if (!st.isDirectory() || st.uid !== process.getuid?.()) throw new Error(`${parentPath} is not a folder of the service's own`);
  }
  const owner = scratch?.uid != null && scratch.gid != null ? { uid: scratch.uid, gid: scratch.gid } : undefined;
  const priv = !!scratch;
  withDir(TenantDir.open(realPathOf(parentPath), { rights: null }), (parent) => {
    parent.remove(name);
    const dir = parent.mkdir(name, priv ? 0o700 : 0o755);
    if (!dir) throw new Error(`${path.join(parentPath, name)} could not be created`);
    withDir(dir, (d) => {
      const names = runtimeNames(skills);
      for (const s of skills) {
        const sub = d.mkdir(names.get(s.key)!, priv ? 0o700 : 0o755);
        if (!sub) continue;
        withDir(sub, (x) => {
          if (owner) x.chown(owner.uid, owner.gid);
          writeSkillFiles(x, s.files, owner, priv);
        });
      }
      if (owner) d.chown(owner.uid, owner.gid);
    });
  });
  return path.join(parentPath, name);
}

interface Manifest {
  skills: Record<string, { key: string; contentHash: string }>;
}

function parseManifest(bytes: Buffer | null): Manifest {
  try {
    const m = JSON.parse(bytes?.toString('utf8') ?? '') as Manifest;
    return m && typeof m.skills === 'object' && m.skills ? m : { skills: {} };
  } catch {
    return { skills: {} };
  }
}

const manifestIn = (dir: TenantDir): Manifest => {
  const r = dir.readFile(MANIFEST_FILE, 1024 * 1024);
  return parseManifest(r.kind === 'read' ? r.bytes : null);
};

/**
 * `<cwd>/.service/skills` opened through descriptors (common/fs/tenant-dir) with `scope`, or null
 * when it is not there, is not a folder (a link swapped in), or may not be read.
 */
function openPersistent(cwd: string, scope: TreeScope): TenantDir | null {
  try {
    return withDir(TenantDir.open(realPathOf(cwd), scope), (root) => root.walk(PERSISTENT_SUBDIR.split(path.sep)));
  } catch {
    return null;
  }
}

/** The manifest of a persistent skills folder (read with the tenant's rights; empty when unreadable). */
export function readManifest(cwd: string, scope: TreeScope): Manifest {
  const dir = openPersistent(cwd, scope);
  return dir ? withDir(dir, manifestIn) : { skills: {} };
}

/** Writes the skill's files into `dir` (never through a link: see TenantDir.writeFile); `priv`: owner-only modes. */
function writeSkillFiles(dir: TenantDir, files: StoredSkillFile[], owner?: { uid: number; gid: number }, priv = false): void {
  const mask = priv ? 0o700 : 0o777;
  for (const f of files) {
    if (f.content === null || !isSafeRelativePath(f.path)) continue;
    const parts = f.path.split('/');
    let cur: TenantDir | null = dir.walk([]);
    for (const seg of parts.slice(0, -1)) {
      if (!cur) break;
      const next: TenantDir | null = cur.mkdir(seg, 0o755 & mask);
      if (next && owner) next.chown(owner.uid, owner.gid);
      cur.close();
      cur = next;
    }
    if (!cur) continue;
    withDir(cur, (d) => d.writeFile(parts[parts.length - 1], f.content as string, (f.kind === 'script' ? 0o755 : 0o644) & mask, owner));
  }
}

const hasSkillMd = (dir: TenantDir, name: string): boolean => {
  const sub = dir.dir(name);
  return sub ? withDir(sub, (d) => d.typeOf(SKILL_MD) === 'file') : false;
};

/**
 * Brings `<cwd>/.service/skills` to the wanted set: managed folders no longer wanted are removed,
 * changed ones rewritten; folders the service never wrote are not touched. Everything is done
 * through descriptors opened without following links (the agent owns the folder and may swap
 * anything in it meanwhile): nothing outside the folder is written or removed.
 */
export function syncPersistent(cwd: string, skills: DeliverableSkill[], isProtected?: (real: string) => boolean): string {
  let root: TenantDir;
  try {
    root = TenantDir.open(realPathOf(cwd), { rights: null, isProtected });
  } catch (err) {
    throw new Error(`the working directory ${cwd} cannot be opened for skill delivery: ${(err as Error).message}`);
  }
  return withDir(root, (r) => {
    // files in the agent's working directory belong to its owner (the service may run as root)
    const st = r.stat();
    const owner = process.getuid?.() === 0 && st.uid !== 0 ? { uid: st.uid, gid: st.gid } : undefined;
    let cur: TenantDir | null = r.walk([]);
    for (const seg of PERSISTENT_SUBDIR.split(path.sep)) {
      const next: TenantDir | null = cur?.mkdir(seg, 0o755) ?? null;
      cur?.close();
      if (!next) throw new Error(`${path.join(cwd, PERSISTENT_SUBDIR)} is not a folder`);
      if (owner) next.chown(owner.uid, owner.gid);
      cur = next;
    }
    withDir(cur as TenantDir, (dir) => {
      const before = manifestIn(dir);
      const names = runtimeNames(skills);
      const next: Manifest = { skills: {} };
      const wanted = new Set(names.values());
      for (const name of Object.keys(before.skills)) {
        if (!wanted.has(name) && /^[a-z0-9-]+$/.test(name)) dir.remove(name);
      }
      for (const s of skills) {
        const name = names.get(s.key)!;
        const prev = before.skills[name];
        if (!prev || prev.contentHash !== s.contentHash || prev.key !== s.key || !hasSkillMd(dir, name)) {
          // a folder of the same name the service did not write is the user's: never overwrite it
          if (!prev && dir.typeOf(name) !== null) continue;
          dir.remove(name);
          const target = dir.mkdir(name, 0o755);
          if (!target) continue;
          withDir(target, (t) => {
            if (owner) t.chown(owner.uid, owner.gid);
            writeSkillFiles(t, s.files, owner);
          });
        }
        next.skills[name] = { key: s.key, contentHash: s.contentHash };
      }
      dir.writeFile(MANIFEST_FILE, JSON.stringify(next, null, 2), 0o644, owner);
    });
    return persistentDirOf(cwd);
  });
}

/** Folders in a persistent skills directory the service does not manage (listed with the tenant's rights). */
export function unmanagedFolders(cwd: string, scope: TreeScope): Array<{ name: string; hasSkillMd: boolean }> {
  const dir = openPersistent(cwd, scope);
  if (!dir) return [];
  return withDir(dir, (d) => {
    const managed = manifestIn(d).skills;
    return d
      .entries()
      .filter((e) => e.type === 'dir' && !(e.name in managed))
      .map((e) => ({ name: e.name, hasSkillMd: hasSkillMd(d, e.name) }));
  });
}
