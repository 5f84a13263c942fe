import * as path from 'node:path';
import type { RequestInit, Response } from 'undici';
import { EntryType, TenantDir, withDir } from '../../common/fs/tenant-dir';
import type { SourceProblem } from './skill-audit';
import { kindOf, RawSkillFile, SKILL_MD } from './skill-files';

/**
 * Reading skills from where they live: local folders, GitHub (through its REST API at a
 * configurable base URL), raw URLs, and skills-index forms unwrapped to GitHub. Network reads are
 * size-limited; local reads never follow a symlink out of the skill's tree.
 */

/** Files above this many bytes are not read from disk (inventoried by size only; the audit fails them). */
const LOCAL_READ_LIMIT = 32 * 1024 * 1024;
const MAX_FILES_PER_SKILL = 500;
const MAX_SKILLS_PER_SOURCE = 1000;
const SKIP_DIRS = new Set(['.git', 'node_modules', '.hg', '.svn']);

export interface SkillFolderRead {
  folderName: string;
  files: RawSkillFile[];
  problems: SourceProblem[];
}

const TOP_DIRS = ['references', 'scripts', 'assets'];

/**
 * The path of a symbolic link's target relative to the skill folder, when it stays inside it (only
 * one link is followed: a target that passes through another link is not read).
 */
function targetInTree(root: TenantDir, rel: string, target: string | null): string[] | null {
  if (target === null) return null;
  let p: string;
  if (path.isAbsolute(target)) {
    const n = path.normalize(target);
    if (!n.startsWith(root.path + path.sep)) return null;
    p = path.relative(root.path, n).split(path.sep).join('/');
  } else p = path.posix.normalize(path.posix.join(rel, target));
  if (p === '.' || p === '' || p === '..' || p.startsWith('../')) return null;
  return p.split('/').filter(Boolean);
}

/**
 * The inventoried files of one local skill folder (SKILL.md, references/, scripts/, assets/), read
 * through its descriptor (common/fs/tenant-dir): links are followed only to entries inside the
 * folder, a file that vanishes or changes during the walk is skipped, and what the tenant may not
 * read refuses the read (PathRefusedError).
 */
export function readLocalSkillFolder(folder: TenantDir): SkillFolderRead {
  const files: RawSkillFile[] = [];
  const problems: SourceProblem[] = [];
  const visit = (dir: TenantDir, rel: string, depth: number) => {
    for (const e of dir.entries()) {
      const relPath = rel ? `${rel}/${e.name}` : e.name;
      if (!rel && e.name !== SKILL_MD && !TOP_DIRS.includes(e.name)) continue;
      if (files.length >= MAX_FILES_PER_SKILL) return;
      let parent = dir;
      let name = e.name;
      let type: EntryType | null = e.type;
      let held: TenantDir | null = null;
      if (e.type === 'symlink') {
        const target = targetInTree(folder, rel, dir.linkTarget(e.name));
        if (!target) {
          problems.push({
            code: 'path_outside_tree',
            path: relPath,
            message: `${relPath} is a symbolic link out of the skill folder (not followed)`,
          });
          continue;
        }
        held = folder.walk(target.slice(0, -1));
        if (!held) continue; // dangling, or through another link
        parent = held;
        name = target[target.length - 1];
        type = held.typeOf(name);
      }
      try {
        if (type === 'dir') {
          if (depth >= 8 || SKIP_DIRS.has(e.name)) continue;
          const sub = parent.dir(name);
          if (sub) withDir(sub, (d) => visit(d, relPath, depth + 1));
        } else if (type === 'file' && kindOf(relPath)) {
          const r = parent.readFile(name, LOCAL_READ_LIMIT);
          if (r.kind === 'read') files.push({ path: relPath, bytes: r.bytes });
          else if (r.kind === 'oversized') files.push({ path: relPath, bytes: Buffer.alloc(0), oversizedBytes: r.size });
          else if (r.why === 'hard_link')
            problems.push({ code: 'path_outside_tree', path: relPath, message: `${relPath} has other hard links (not read)` });
        }
      } finally {
        held?.close();
      }
    }
  };
  visit(folder, '', 0);
  return { folderName: path.basename(folder.path), files, problems };
}

/**
 * Skill folders under an open folder, as paths relative to it ('' = the folder itself): the folder
 * when it has a SKILL.md, else folders with one, searched 4 levels deep.
 */
export function discoverLocalSkillFolders(root: TenantDir): string[] {
  if (root.typeOf(SKILL_MD)) return [''];
  const found: string[] = [];
  const walk = (dir: TenantDir, rel: string, depth: number) => {
    if (depth > 4 || found.length >= MAX_SKILLS_PER_SOURCE) return;
    for (const e of dir.entries().sort((a, b) => (a.name < b.name ? -1 : 1))) {
      if (e.type !== 'dir' || SKIP_DIRS.has(e.name)) continue;
      const sub = dir.dir(e.name);
      if (!sub) continue;
      const subRel = rel ? `${rel}/${e.name}` : e.name;
      withDir(sub, (d) => (d.typeOf(SKILL_MD) ? found.push(subRel) : walk(d, subRel, depth + 1)));
      if (found.length >= MAX_SKILLS_PER_SOURCE) return;
    }
  };
  walk(root, '', 1);
  // a folder shaped like a skill (references/, scripts/ or assets/) but without SKILL.md is imported
  // as one so that the audit can say what is wrong with it (missing_skill_md)
  if (!found.length && TOP_DIRS.some((d) => root.typeOf(d))) found.push('');
  return found;
}

// ---------------------------------------------------------------- source forms

export interface GithubSource {
  type: 'github';
  owner: string;
  repo: string;
  ref: string | null;
  /** folder or SKILL.md path inside the repository */
  path: string | null;
  /** a skill name to find anywhere in the repository (`owner/repo/skill`, skills-index forms) */
  skill: string | null;
  /** the source was a skills-index URL or install command */
  viaSkillsIndex: boolean;
}

export type ParsedSource = GithubSource | { type: 'url'; url: string } | { type: 'local'; path: string };

const NAME = /^[A-Za-z0-9_.-]+$/;

/** What an import `source` string names. Throws an Error with a user-facing message for unusable input. */
export function parseSkillSource(input: string): ParsedSource {
  const source = input.trim();
  if (!source) throw new Error('source must not be empty');
  // install commands: `npx skills add owner/repo --skill name`, `skills add <url> -s name`, `owner/repo@skill`
  const cmd = /^(?:(?:npx|pnpm dlx|bunx|yarn dlx)\s+)?(?:-y\s+)?skills(?:@\S+)?\s+(?:add|install|i)\s+(.+)$/i.exec(source);
  if (cmd) {
    const tokens = cmd[1].split(/\s+/).filter(Boolean);
    let skill: string | null = null;
    const positional: string[] = [];
    for (let i = 0; i < tokens.length; i++) {
      const t = tokens[i];
      if (t === '--skill' || t === '-s') skill = tokens[++i] ?? null;
      else if (t.startsWith('--skill=')) skill = t.slice('--skill='.length);
      else if (!t.startsWith('-')) positional.push(t);
    }
    if (!positional.length) throw new Error('the install command names no repository');
    const inner = parseSkillSource(positional[0]);
    if (inner.type !== 'github') throw new Error('the install command does not name a GitHub repository');
    return { ...inner, skill: skill ?? inner.skill, viaSkillsIndex: true };
  }
  if (/^https?:\/\//i.test(source)) {
    let u: URL;
    try {
      u = new URL(source);
    } catch {
      throw new Error(`source is not a valid URL: ${source}`);
    }
    const parts = u.pathname.split('/').filter(Boolean).map(decodeURIComponent);
    const host = u.hostname.toLowerCase();
    if (host === 'github.com' || host === 'www.github.com') {
      if (parts.length < 2) throw new Error('a GitHub URL must name owner and repository');
      const [owner, repoRaw, mode, ref, ...rest] = parts;
      const repo = repoRaw.replace(/\.git$/, '');
      if ((mode === 'tree' || mode === 'blob') && ref) {
        return { type: 'github', owner, repo, ref, path: rest.length ? rest.join('/') : null, skill: null, viaSkillsIndex: false };
      }
      return { type: 'github', owner, repo, ref: null, path: null, skill: null, viaSkillsIndex: false };
    }
    if (host === 'skills.sh' || host === 'www.skills.sh') {
      if (parts.length < 2) throw new Error('a skills index URL must name owner and repository');
      const [owner, repo, skill] = parts;
      return { type: 'github', owner, repo, ref: null, path: null, skill: skill ?? null, viaSkillsIndex: true };
    }
    return { type: 'url', url: u.toString() };
  }
  if (source.startsWith('/') || source.startsWith('~') || source.startsWith('./') || source.startsWith('../')) {
    return { type: 'local', path: source };
  }
  // owner/repo, owner/repo/skill, owner/repo@skill
  const at = /^([^/\s]+)\/([^/\s@]+)@([^/\s]+)$/.exec(source);
  if (at && NAME.test(at[1]) && NAME.test(at[2])) {
    return { type: 'github', owner: at[1], repo: at[2], ref: null, path: null, skill: at[3], viaSkillsIndex: true };
  }
  const segs = source.split('/');
  if ((segs.length === 2 || segs.length === 3) && segs.every((s) => NAME.test(s) && s !== '.' && s !== '..')) {
    return {
      type: 'github',
      owner: segs[0],
      repo: segs[1].replace(/\.git$/, ''),
      ref: null,
      path: null,
      skill: segs[2] ?? null,
      viaSkillsIndex: false,
    };
  }
  throw new Error(
    `Unrecognised skill source "${source}": use a GitHub URL or owner/repo[/skill], a skills index URL or install command, an http(s) URL to a SKILL.md, or an absolute local path`,
  );
}

// ---------------------------------------------------------------- network

export class SourceFetchError extends Error {
  constructor(
    message: string,
    readonly kind: 'unreachable' | 'too_large' | 'not_found',
  ) {
    super(message);
  }
}

export interface FetchLimits {
  maxFileBytes: number;
  maxTotalBytes: number;
  timeoutMs: number;
}

/** How sources are fetched: the outbound guard (redirects followed and checked); refusals are thrown as they are. */
export type SourceFetcher = (url: string, init: RequestInit) => Promise<Response>;

/** GET with a byte cap: the body is read as a stream and abandoned past `limit`. */
export async function fetchLimited(
  fetcher: SourceFetcher,
  url: string,
  limit: number,
  timeoutMs: number,
  headers: Record<string, string> = {},
): Promise<Buffer> {
  let res: Response;
  try {
    res = await fetcher(url, {
      headers: { 'user-agent': 'agent-orchestration-service', ...headers },
      signal: AbortSignal.timeout(timeoutMs),
    });
  } catch (err) {
    if ((err as { code?: unknown }).code === 'url_not_allowed') throw err;
    throw new SourceFetchError(`could not reach ${redactUrl(url)}: ${(err as Error).message}`, 'unreachable');
  }
  if (res.status === 404) throw new SourceFetchError(`${redactUrl(url)} answered 404`, 'not_found');
  if (!res.ok) throw new SourceFetchError(`${redactUrl(url)} answered ${res.status}`, 'unreachable');
  const declared = Number(res.headers.get('content-length') ?? '0');
  if (declared > limit) {
    await res.body?.cancel().catch(() => undefined);
    throw new SourceFetchError(`${redactUrl(url)} is larger than ${limit} bytes`, 'too_large');
  }
  const chunks: Buffer[] = [];
  let total = 0;
  const reader = res.body?.getReader();
  if (!reader) return Buffer.alloc(0);
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > limit) {
      await reader.cancel().catch(() => undefined);
      throw new SourceFetchError(`${redactUrl(url)} is larger than ${limit} bytes`, 'too_large');
    }
    chunks.push(Buffer.from(value));
  }
  return Buffer.concat(chunks);
}

const redactUrl = (url: string) => url.replace(/\/\/[^/@]*@/, '//');

interface TreeEntry {
  path: string;
  type: string;
  sha: string;
  size?: number;
  mode?: string;
}

export interface GithubSkillRead extends SkillFolderRead {
  /** folder of the skill inside the repository ('' = root) */
  repoPath: string;
}

export interface GithubFetchResult {
  owner: string;
  repo: string;
  ref: string;
  commit: string;
  skills: GithubSkillRead[];
}

/** The GitHub REST API at `baseUrl` (SERVICE_GITHUB_API_URL; tests point it at a local server). */
export class GithubClient {
  constructor(
    private readonly fetcher: SourceFetcher,
    private readonly baseUrl: string,
    private readonly limits: FetchLimits,
    private readonly token?: string,
  ) {}

  private async json<T>(p: string): Promise<T> {
    const headers: Record<string, string> = { accept: 'application/vnd.github+json' };
    if (this.token) headers.authorization = `Bearer ${this.token}`;
    const body = await fetchLimited(
      this.fetcher,
      `${this.baseUrl.replace(/\/$/, '')}${p}`,
      32 * 1024 * 1024,
      this.limits.timeoutMs,
      headers,
    );
    try {
      return JSON.parse(body.toString('utf8')) as T;
    } catch {
      throw new SourceFetchError(`GitHub answered ${p} with invalid JSON`, 'unreachable');
    }
  }

  /** The commit a ref names (default branch when null). */
  async resolveCommit(owner: string, repo: string, ref: string | null): Promise<{ ref: string; commit: string }> {
    const r = `/repos/${encodeURIComponent(owner)}/${encodeURIComponent(repo)}`;
    const useRef = ref ?? (await this.json<{ default_branch?: string }>(r)).default_branch ?? 'main';
    if (/^[0-9a-f]{40}$/i.test(useRef)) return { ref: useRef, commit: useRef.toLowerCase() };
    const c = await this.json<{ sha?: string }>(`${r}/commits/${encodeURIComponent(useRef)}`);
    if (!c.sha) throw new SourceFetchError(`GitHub did not resolve ${owner}/${repo}@${useRef} to a commit`, 'not_found');
    return { ref: useRef, commit: c.sha };
  }

  /** Skill folders of a GitHub source, pinned to one commit. */
  async fetchSkills(src: GithubSource, pinnedCommit?: string): Promise<GithubFetchResult> {
    const { ref, commit } = pinnedCommit
      ? { ref: src.ref ?? pinnedCommit, commit: pinnedCommit }
      : await this.resolveCommit(src.owner, src.repo, src.ref);
    const r = `/repos/${encodeURIComponent(src.owner)}/${encodeURIComponent(src.repo)}`;
    const tree = await this.json<{ tree?: TreeEntry[] }>(`${r}/git/trees/${commit}?recursive=1`);
    const entries = tree.tree ?? [];
    const skillDirs = entries
      .filter((e) => e.type === 'blob' && (e.path === SKILL_MD || e.path.endsWith(`/${SKILL_MD}`)))
      .map((e) => (e.path === SKILL_MD ? '' : e.path.slice(0, -SKILL_MD.length - 1)));
    let chosen: string[];
    if (src.path) {
      const p = src.path.replace(/\/+$/, '');
      const folder = p === SKILL_MD ? '' : p.endsWith(`/${SKILL_MD}`) ? p.slice(0, -SKILL_MD.length - 1) : p;
      chosen = skillDirs.includes(folder) ? [folder] : skillDirs.filter((d) => folder === '' || d.startsWith(`${folder}/`));
    } else if (src.skill) {
      const want = src.skill.toLowerCase();
      chosen = skillDirs
        .filter((d) => (d === '' ? src.repo : d.split('/').pop()!).toLowerCase() === want)
        .sort((a, b) => a.length - b.length)
        .slice(0, 1);
    } else chosen = skillDirs;
    if (!chosen.length)
      throw new SourceFetchError(
        `no SKILL.md found in ${src.owner}/${src.repo}${src.path ? `/${src.path}` : ''}${src.skill ? ` for skill ${src.skill}` : ''}`,
        'not_found',
      );
    // nested skill folders belong to the nearest skill: a folder is not read as part of its parent
    chosen = chosen.slice(0, MAX_SKILLS_PER_SOURCE);
    let total = 0;
    const skills: GithubSkillRead[] = [];
    for (const dir of chosen) {
      const prefix = dir ? `${dir}/` : '';
      const files: RawSkillFile[] = [];
      const problems: SourceProblem[] = [];
      for (const e of entries) {
        if (e.type !== 'blob' || !e.path.startsWith(prefix)) continue;
        const rel = e.path.slice(prefix.length);
        if (!kindOf(rel)) continue;
        if (rel.split('/').some((s) => s === '..' || s === '.')) {
          problems.push({ code: 'path_outside_tree', path: rel, message: `${rel} leaves the skill folder` });
          continue;
        }
        if (e.mode === '120000') {
          problems.push({ code: 'path_outside_tree', path: rel, message: `${rel} is a symbolic link (not followed)` });
          continue;
        }
        if ((e.size ?? 0) > this.limits.maxFileBytes) {
          files.push({ path: rel, bytes: Buffer.alloc(0), oversizedBytes: e.size });
          continue;
        }
        total += e.size ?? 0;
        if (total > this.limits.maxTotalBytes)
          throw new SourceFetchError(`the source is larger than ${this.limits.maxTotalBytes} bytes in total`, 'too_large');
        const blob = await this.json<{ content?: string; encoding?: string }>(`${r}/git/blobs/${e.sha}`);
        const bytes = blob.encoding === 'base64' ? Buffer.from(blob.content ?? '', 'base64') : Buffer.from(blob.content ?? '', 'utf8');
        if (bytes.length > this.limits.maxFileBytes) files.push({ path: rel, bytes: Buffer.alloc(0), oversizedBytes: bytes.length });
        else files.push({ path: rel, bytes });
      }
      skills.push({ folderName: dir ? dir.split('/').pop()! : src.repo, repoPath: dir, files, problems });
    }
    return { owner: src.owner, repo: src.repo, ref, commit, skills };
  }
}
