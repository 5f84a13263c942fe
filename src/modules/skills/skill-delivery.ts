import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { isSafeRelativePath, shortHash, SKILL_MD, StoredSkillFile } from './skill-files';

/**
 * How skills reach an agent's runs, per adapter type:
 *
 * - `process`: ephemeral. Before each run the agent's skills are written to a fresh folder
 *   (`$TMPDIR/service-run-skills/<runId>/<runtimeName>/SKILL.md …`), named by SERVICE_SKILLS_DIR,
 *   and removed when the run ends.
 * - local CLI runtimes (`runtime_a_local` … `runtime_f_local`, `runtime_g`): persistent when the
 *   agent has a `cwd`: kept in `<cwd>/.service/skills/<runtimeName>/`, updated before each run,
 *   with a manifest of what the service manages; folders the service did not write are left
 *   alone (reported as user_installed / external_unknown). Without a `cwd`: ephemeral as above.
 * - coding-agent CLIs (`claude_local`, `codex_local`, `gemini_local`, `opencode_local`): ephemeral;
 *   their runtime copies the run's folder into the CLI's own skills folder in the agent's home
 *   (e.g. `~/.claude/skills/`) for the run and removes it after.
 * - `http`, `gateway_a` and external adapters: unsupported (a remote cannot receive files); the
 *   assignment is recorded only.
 */
export type SkillSyncMode = 'persistent' | 'ephemeral' | 'unsupported';

export const SKILLS_DIR_ENV = 'SERVICE_SKILLS_DIR';
export const PERSISTENT_SUBDIR = path.join('.service', 'skills');
export const MANIFEST_FILE = '.service-managed.json';
export const CLI_RUNTIME_TYPES = ['runtime_a_local', 'runtime_b_local', 'runtime_c_local', 'runtime_d_local', 'runtime_e_local', 'runtime_f_local', 'runtime_g'];

/** the coding-agent CLIs: per run, the runtime copies the run's skills where its CLI reads them */
export const CODING_CLI_TYPES = ['claude_local', 'codex_local', 'gemini_local', 'opencode_local'];

export function syncModeOf(adapterType: string, config: Record<string, unknown>): SkillSyncMode {
  if (adapterType === 'process' || CODING_CLI_TYPES.includes(adapterType)) return 'ephemeral';
  if (CLI_RUNTIME_TYPES.includes(adapterType)) return typeof config.cwd === 'string' && config.cwd.length > 0 ? 'persistent' : 'ephemeral';
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

function writeSkillFolder(dir: string, files: StoredSkillFile[], priv = false): void {
  const dirMode = priv ? 0o700 : 0o755;
  fs.mkdirSync(dir, { recursive: true, mode: dirMode });
  for (const f of files) {
    if (f.content === null || !isSafeRelativePath(f.path)) continue;
    const p = path.join(dir, f.path);
    fs.mkdirSync(path.dirname(p), { recursive: true, mode: dirMode });
    fs.writeFileSync(p, f.content, { mode: (f.kind === 'script' ? 0o755 : 0o644) & (priv ? 0o700 : 0o777) });
  }
}

function chownTree(p: string, uid: number, gid: number): void {
  fs.chownSync(p, uid, gid);
  if (fs.lstatSync(p).isDirectory()) for (const e of fs.readdirSync(p)) chownTree(path.join(p, e), uid, gid);
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
 */
export function materialiseEphemeral(runId: string, skills: DeliverableSkill[], scratch?: RunScratchTarget): string {
  const dir = scratch ? path.join(scratch.dir, 'skills') : ephemeralDirOf(runId);
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(dir, { recursive: true, mode: scratch ? 0o700 : 0o755 });
  const names = runtimeNames(skills);
  for (const s of skills) writeSkillFolder(path.join(dir, names.get(s.key)!), s.files, !!scratch);
  if (scratch?.uid != null && scratch.gid != null) chownTree(dir, scratch.uid, scratch.gid);
  return dir;
}

interface Manifest {
  skills: Record<string, { key: string; contentHash: string }>;
}

export function readManifest(dir: string): Manifest {
  try {
    const m = JSON.parse(fs.readFileSync(path.join(dir, MANIFEST_FILE), 'utf8')) as Manifest;
    return m && typeof m.skills === 'object' && m.skills ? m : { skills: {} };
  } catch {
    return { skills: {} };
  }
}

/**
 * Brings `<cwd>/.service/skills` to the wanted set: managed folders no longer wanted are removed,
 * changed ones rewritten; folders the service never wrote are not touched.
 */
export function syncPersistent(cwd: string, skills: DeliverableSkill[]): string {
  const dir = persistentDirOf(cwd);
  fs.mkdirSync(dir, { recursive: true, mode: 0o755 });
  // files in the agent's working directory belong to its owner (the service may run as root)
  const owner = fs.statSync(cwd);
  const own = (p: string, recursive = true) => {
    if (process.getuid?.() !== 0 || owner.uid === 0) return;
    if (recursive) chownTree(p, owner.uid, owner.gid);
    else fs.chownSync(p, owner.uid, owner.gid);
  };
  own(path.dirname(dir), false);
  own(dir, false);
  const before = readManifest(dir);
  const names = runtimeNames(skills);
  const next: Manifest = { skills: {} };
  const wanted = new Set(names.values());
  for (const name of Object.keys(before.skills)) {
    if (!wanted.has(name) && /^[a-z0-9-]+$/.test(name)) fs.rmSync(path.join(dir, name), { recursive: true, force: true });
  }
  for (const s of skills) {
    const name = names.get(s.key)!;
    const prev = before.skills[name];
    const target = path.join(dir, name);
    if (!prev || prev.contentHash !== s.contentHash || prev.key !== s.key || !fs.existsSync(path.join(target, SKILL_MD))) {
      // a folder of the same name the service did not write is the user's: never overwrite it
      if (!prev && fs.existsSync(target)) continue;
      fs.rmSync(target, { recursive: true, force: true });
      writeSkillFolder(target, s.files);
      own(target);
    }
    next.skills[name] = { key: s.key, contentHash: s.contentHash };
  }
  fs.writeFileSync(path.join(dir, MANIFEST_FILE), JSON.stringify(next, null, 2));
  own(path.join(dir, MANIFEST_FILE));
  return dir;
}

/** Folders in a persistent skills directory the service does not manage. */
export function unmanagedFolders(cwd: string): Array<{ name: string; hasSkillMd: boolean }> {
  const dir = persistentDirOf(cwd);
  const managed = readManifest(dir).skills;
  let entries: fs.Dirent[];
  try {
    entries = fs.readdirSync(dir, { withFileTypes: true });
  } catch {
    return [];
  }
  return entries
    .filter((e) => e.isDirectory() && !(e.name in managed))
    .map((e) => ({ name: e.name, hasSkillMd: fs.existsSync(path.join(dir, e.name, SKILL_MD)) }));
}
