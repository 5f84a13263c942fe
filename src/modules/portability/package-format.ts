import { posix } from 'node:path';
import YAML from 'yaml';
import { urlKeyOf } from '../../common/http/url-key';
import { portabilityError } from './portability.errors';

/**
 * The package format: a folder of markdown files with YAML frontmatter, compatible with the open
 * `agentcompanies/v1` layout (COMPANY.md, agents/<slug>/AGENTS.md, projects/<slug>/PROJECT.md,
 * tasks/<slug>/TASK.md, skills/<slug>/SKILL.md) plus a few folders of our own (goals/<slug>/GOAL.md,
 * routines as recurring tasks, issues as tasks with documents and comments). Identity across
 * packages is the slug; references between files are slugs, never database ids. Pure functions:
 * the shapes, markdown with frontmatter, paths and limits; rendering is package-render.ts, parsing
 * and validation package-parse.ts.
 */

export const PACKAGE_SCHEMA = 'agentcompanies/v1';
/** schemas an import accepts (the open format's draft name included) */
export const ACCEPTED_SCHEMAS = ['agentcompanies/v1', 'agentcompanies/v1-draft'];
export const FORMAT_VERSION = 1;
/** adapter of an agent whose file names none (packages made elsewhere): a local runtime with defaults */
export const DEFAULT_ADAPTER_TYPE = 'runtime_a_local';

/** Size limits of an imported package (documented in the README and OpenAPI). */
export const LIMITS = {
  maxFiles: 50_000,
  maxFileBytes: 1024 * 1024,
  maxPackageBytes: 64 * 1024 * 1024,
  maxPathLength: 512,
};

export type Json = Record<string, unknown>;

export interface EnvDeclaration {
  kind: 'secret';
  secret: string;
}
export type PackageEnv = Record<string, string | EnvDeclaration>;

export interface PkgSecret {
  name: string;
  description: string | null;
}
export interface PkgLabel {
  name: string;
  color: string | null;
}
export interface PkgBudgetPolicy {
  scopeType: 'company' | 'agent' | 'project';
  scope: string | null;
  metric: string;
  windowKind: string;
  amount: number;
  warnPercent: number;
  hardStopEnabled: boolean;
  notifyEnabled: boolean;
  isActive: boolean;
}
export interface PkgCompany {
  slug: string;
  name: string;
  description: string | null;
  brandColor: string | null;
  budgetMonthlyCents: number;
  requireBoardApprovalForNewAgents: boolean;
  labels: PkgLabel[];
  budgetPolicies: PkgBudgetPolicy[];
  secrets: PkgSecret[];
}
export interface PkgAgent {
  path: string;
  slug: string;
  name: string;
  role: string;
  title: string | null;
  capabilities: string;
  reportsTo: string | null;
  adapterType: string;
  adapterConfig: Json;
  env: PackageEnv;
  runtimeConfig: Json;
  budgetMonthlyCents: number;
  skills: string[];
  instructions: string;
  metadata: Json;
}
export interface PkgGoal {
  path: string;
  slug: string;
  title: string;
  description: string | null;
  level: string;
  status: string;
  parent: string | null;
  owner: string | null;
  isCompanyDefault: boolean;
}
export interface PkgWorkspace {
  name: string;
  isPrimary: boolean;
  config: Json;
}
export interface PkgProject {
  path: string;
  slug: string;
  name: string;
  description: string | null;
  status: string;
  owner: string | null;
  goals: string[];
  targetDate: string | null;
  color: string | null;
  env: PackageEnv;
  executionWorkspacePolicy: Json | null;
  workspaces: PkgWorkspace[];
}
export interface PkgSkill {
  path: string;
  slug: string;
  files: Array<{ path: string; content: string }>;
}
export interface PkgTrigger {
  kind: string;
  label: string | null;
  enabled: boolean;
  cronExpression?: string;
  timezone?: string;
}
export interface PkgRoutine {
  path: string;
  slug: string;
  title: string;
  description: string | null;
  assignee: string;
  project: string | null;
  goal: string | null;
  priority: string;
  status: string;
  concurrencyPolicy: string | null;
  catchUpPolicy: string | null;
  triggers: PkgTrigger[];
}
export interface PkgComment {
  author: string | null;
  body: string;
}
export interface PkgDocument {
  key: string;
  title: string | null;
  format: string;
  body: string;
}
export interface PkgIssue {
  path: string;
  slug: string;
  title: string;
  description: string | null;
  status: string;
  priority: string;
  assignee: string | null;
  project: string | null;
  goal: string | null;
  parent: string | null;
  labels: string[];
  comments: PkgComment[];
  documents: PkgDocument[];
}

export interface CompanyPackage {
  company: PkgCompany;
  agents: PkgAgent[];
  goals: PkgGoal[];
  projects: PkgProject[];
  skills: PkgSkill[];
  routines: PkgRoutine[];
  issues: PkgIssue[];
}

export interface PackageFiles {
  rootPath: string;
  files: Record<string, string>;
}

// ------------------------------------------------------------------ markdown with frontmatter

export function renderMarkdown(front: Json, body: string | null | undefined): string {
  const yaml = YAML.stringify(dropEmpty(front), { lineWidth: 0 });
  const text = (body ?? '').replace(/\s+$/, '');
  return `---\n${yaml}---\n${text ? `\n${text}\n` : ''}`;
}

/** Omits undefined, null, empty strings, empty arrays and empty objects (exporters omit empty fields). */
function dropEmpty(o: Json): Json {
  const out: Json = {};
  for (const [k, v] of Object.entries(o)) {
    if (v === undefined || v === null || v === '') continue;
    if (Array.isArray(v) && v.length === 0) continue;
    if (v && typeof v === 'object' && !Array.isArray(v) && Object.keys(v).length === 0) continue;
    out[k] = v;
  }
  return out;
}

export function parseMarkdown(path: string, text: string): { front: Json; body: string } {
  const src = text.replace(/^\uFEFF/, '');
  if (!src.startsWith('---')) return { front: {}, body: src.trim() };
  const end = src.search(/\r?\n---[ \t]*(\r?\n|$)/);
  if (end < 0) throw bad(path, 'frontmatter is not closed by a --- line');
  const yamlText = src.slice(src.indexOf('\n') + 1, end + 1);
  let front: unknown;
  try {
    front = yamlText.trim() ? YAML.parse(yamlText) : {};
  } catch (err) {
    throw bad(path, `invalid YAML frontmatter: ${(err as Error).message.split('\n')[0]}`);
  }
  if (front === null || front === undefined) front = {};
  if (typeof front !== 'object' || Array.isArray(front)) throw bad(path, 'frontmatter must be a YAML mapping');
  const rest = src.slice(end).replace(/^\r?\n---[ \t]*/, '');
  return { front: front as Json, body: rest.trim() };
}

export function bad(file: string, problem: string) {
  return portabilityError('invalid_package', `${file}: ${problem}`, { file, problem });
}

// ------------------------------------------------------------------ paths and limits

/** A package path: relative POSIX, no `..`, no absolute or drive paths, no backslashes. */
export function assertSafePath(path: string): void {
  if (
    !path ||
    path.length > LIMITS.maxPathLength ||
    path.includes('\\') ||
    path.includes('\0') ||
    path.startsWith('/') ||
    /^[A-Za-z]:/.test(path) ||
    path.split('/').some((seg) => seg === '..' || seg === '.' || seg === '') ||
    posix.normalize(path) !== path
  ) {
    throw bad(path.slice(0, LIMITS.maxPathLength), 'path escapes the package or is not a plain relative path');
  }
}

/** Validates paths and sizes; strips the root folder prefix when files carry it. */
export function normalizeFiles(input: PackageFiles): Map<string, string> {
  const entries = Object.entries(input.files ?? {});
  if (entries.length > LIMITS.maxFiles) {
    throw portabilityError('package_too_large', `package: ${entries.length} files, more than the limit of ${LIMITS.maxFiles}`, {
      file: 'package',
      problem: 'too many files',
      limit: LIMITS.maxFiles,
    });
  }
  let total = 0;
  const root = (input.rootPath ?? '').replace(/\/+$/, '');
  const out = new Map<string, string>();
  for (const [rawPath, content] of entries) {
    const path = root && rawPath.startsWith(`${root}/`) ? rawPath.slice(root.length + 1) : rawPath;
    assertSafePath(path);
    if (typeof content !== 'string') throw bad(path, 'file content must be a string');
    const size = Buffer.byteLength(content, 'utf8');
    if (size > LIMITS.maxFileBytes) {
      throw portabilityError('package_too_large', `${path}: ${size} bytes, more than the limit of ${LIMITS.maxFileBytes} per file`, {
        file: path,
        problem: 'file too large',
        limit: LIMITS.maxFileBytes,
      });
    }
    total += size;
    if (total > LIMITS.maxPackageBytes) {
      throw portabilityError('package_too_large', `package: more than the limit of ${LIMITS.maxPackageBytes} bytes`, {
        file: 'package',
        problem: 'package too large',
        limit: LIMITS.maxPackageBytes,
      });
    }
    out.set(path, content);
  }
  return out;
}

export const slugOf = (name: string, fallback: string): string => urlKeyOf(name, fallback);

/** Items ordered so that each comes after the item it points to (parents first). */
export function parentsFirst<T extends { slug: string }>(items: T[], parentOf: (t: T) => string | null): T[] {
  const bySlug = new Map(items.map((i) => [i.slug, i]));
  const done = new Set<string>();
  const out: T[] = [];
  const visit = (i: T) => {
    if (done.has(i.slug)) return;
    done.add(i.slug);
    const p = parentOf(i);
    if (p !== null && bySlug.has(p)) visit(bySlug.get(p)!);
    out.push(i);
  };
  for (const i of items) visit(i);
  return out;
}
