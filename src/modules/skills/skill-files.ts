import { createHash } from 'node:crypto';
import { TextDecoder } from 'node:util';
import YAML from 'yaml';

/**
 * Skills as files: pure helpers shared by imports, the catalog, edits and delivery.
 *
 * A skill is a folder with `SKILL.md` (YAML frontmatter + markdown) and optional `references/`,
 * `scripts/`, `assets/`. Only those four places are inventoried; anything else in the folder is
 * ignored. Hashes are over raw bytes, so they are byte-exact.
 */

export type SkillFileKind = 'skill' | 'reference' | 'script' | 'asset';
export type TrustLevel = 'markdown_only' | 'assets' | 'scripts_executables';

export const SKILL_MD = 'SKILL.md';

/** A file as read from a source: raw bytes under a relative POSIX path. */
export interface RawSkillFile {
  path: string;
  bytes: Buffer;
  /** set when the file was too large to read: its size (bytes is empty; the audit fails it) */
  oversizedBytes?: number;
}

/** A file as stored: text content, or null when the service keeps only its inventory entry. */
export interface StoredSkillFile {
  path: string;
  kind: SkillFileKind;
  sizeBytes: number;
  sha256: string;
  content: string | null;
}

export interface InventoryEntry {
  path: string;
  kind: SkillFileKind;
  sizeBytes: number;
  sha256: string;
}

/** Size above which a supporting file is kept as an inventory entry only (the audit fails it). SKILL.md has no limit. */
export const MAX_SUPPORTING_FILE_BYTES = 1024 * 1024;

const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The inventory kind of a relative path, or null for files that are not part of a skill. */
export function kindOf(path: string): SkillFileKind | null {
  if (path === SKILL_MD) return 'skill';
  if (path.startsWith('references/')) return 'reference';
  if (path.startsWith('scripts/')) return 'script';
  if (path.startsWith('assets/')) return 'asset';
  return null;
}

/** A relative path inside the tree: no absolute paths, no `..`, no empty or dot segments. */
export function isSafeRelativePath(path: string): boolean {
  if (!path || path.length > 512 || path.startsWith('/') || path.includes('\\') || path.includes('\0')) return false;
  return path.split('/').every((s) => s.length > 0 && s !== '.' && s !== '..');
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** Text: valid UTF-8 without NUL bytes. */
export function textOf(bytes: Buffer): string | null {
  if (bytes.includes(0)) return null;
  try {
    return utf8.decode(bytes);
  } catch {
    return null;
  }
}

export const sha256 = (data: Buffer | string): string => createHash('sha256').update(data).digest('hex');

/** Stored form of raw files: inventoried paths only, text kept when text and within the limit. */
export function toStoredFiles(raw: RawSkillFile[]): StoredSkillFile[] {
  const out: StoredSkillFile[] = [];
  for (const f of raw) {
    const kind = kindOf(f.path);
    if (!kind) continue;
    if (f.oversizedBytes !== undefined) {
      out.push({ path: f.path, kind, sizeBytes: f.oversizedBytes, sha256: sha256(`unread:${f.path}:${f.oversizedBytes}`), content: null });
      continue;
    }
    const text = textOf(f.bytes);
    const tooBig = kind !== 'skill' && f.bytes.length > MAX_SUPPORTING_FILE_BYTES;
    out.push({ path: f.path, kind, sizeBytes: f.bytes.length, sha256: sha256(f.bytes), content: text !== null && !tooBig ? text : null });
  }
  return out.sort((a, b) => (a.path === SKILL_MD ? -1 : b.path === SKILL_MD ? 1 : a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

export function inventoryOf(files: Array<Pick<StoredSkillFile, 'path' | 'kind' | 'sizeBytes' | 'sha256'>>): InventoryEntry[] {
  return files.map((f) => ({ path: f.path, kind: f.kind, sizeBytes: f.sizeBytes, sha256: f.sha256 }));
}

/** The highest class present: scripts > assets > markdown only. */
export function trustLevelOf(files: Array<{ kind: SkillFileKind }>): TrustLevel {
  if (files.some((f) => f.kind === 'script')) return 'scripts_executables';
  if (files.some((f) => f.kind === 'asset')) return 'assets';
  return 'markdown_only';
}

/** Byte-exact hash of a skill's files: sha256 over the sorted `path NUL sha256 LF` lines. */
export function contentHashOf(files: Array<{ path: string; sha256: string }>): string {
  const lines = [...files].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0)).map((f) => `${f.path}\0${f.sha256}\n`);
  return sha256(lines.join(''));
}

export interface ParsedSkillMd {
  frontmatter: Record<string, unknown>;
  body: string;
}

export class SkillMdError extends Error {}

const FRONTMATTER = /^\uFEFF?---[ \t]*\r?\n([\s\S]*?)\r?\n---[ \t]*(?:\r?\n|$)/;

/** Frontmatter (a YAML mapping; absent = {}) and body. Throws SkillMdError for invalid YAML or a non-mapping. */
export function parseSkillMd(text: string): ParsedSkillMd {
  const m = FRONTMATTER.exec(text);
  if (!m) return { frontmatter: {}, body: text };
  let data: unknown;
  try {
    data = YAML.parse(m[1], { maxAliasCount: 50 });
  } catch (err) {
    throw new SkillMdError(`SKILL.md frontmatter is not valid YAML: ${(err as Error).message.split('\n')[0]}`);
  }
  if (data === null || data === undefined) data = {};
  if (!isPlainObject(data)) throw new SkillMdError('SKILL.md frontmatter must be a YAML mapping');
  return { frontmatter: data, body: text.slice(m[0].length) };
}

/** SKILL.md text for a name, description and body (frontmatter written by the yaml library). */
export function renderSkillMd(frontmatter: Record<string, unknown>, body: string): string {
  const clean = Object.fromEntries(Object.entries(frontmatter).filter(([, v]) => v !== undefined && v !== null));
  return `---\n${YAML.stringify(clean).trimEnd()}\n---\n\n${body.replace(/^\n+/, '')}`;
}

/** kebab-case slug: lowercase ASCII letters and digits separated by single hyphens. */
export function slugify(input: string): string {
  return input
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 80)
    .replace(/-+$/g, '');
}

export const SLUG_RE = /^[a-z0-9]+(-[a-z0-9]+)*$/;

/** A reference as the resolver compares it: trimmed, lowercase, no surrounding slashes. */
export const normalizeRef = (ref: string): string =>
  ref
    .trim()
    .toLowerCase()
    .replace(/^\/+|\/+$/g, '');

export const shortHash = (input: string): string => sha256(input).slice(0, 12);

const str = (v: unknown): string | undefined => (typeof v === 'string' && v.trim().length > 0 ? v.trim() : undefined);

/** What SKILL.md says about the skill: name, description, slug, an explicit canonical key, metadata. */
export interface SkillIdentity {
  name: string;
  description: string | null;
  slug: string;
  explicitKey: string | null;
  metadata: Record<string, unknown>;
}

/** Name, description, slug (frontmatter slug, else from name, else from the folder) and key override. */
export function identityOf(fm: Record<string, unknown>, folderName: string): SkillIdentity {
  const metadata = isPlainObject(fm.metadata) ? fm.metadata : {};
  const fmSlug = str(fm.slug);
  const slug = (fmSlug && slugify(fmSlug)) || slugify(str(fm.name) ?? '') || slugify(folderName) || 'skill';
  const explicit = str(fm.key) ?? str(fm.skillKey) ?? str(metadata.skillKey) ?? str(metadata.canonicalKey) ?? str(metadata.serviceSkillKey);
  return {
    name: str(fm.name) ?? slug,
    description: str(fm.description) ?? null,
    slug,
    explicitKey: explicit ? normalizeRef(explicit) : null,
    metadata,
  };
}
