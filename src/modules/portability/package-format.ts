import { posix } from 'node:path';
import YAML from 'yaml';
import { urlKeyOf } from '../../common/http/url-key';
import { ISSUE_PRIORITIES, ISSUE_STATUSES } from '../issues/issue.types';
import { portabilityError } from './portability.errors';

/**
 * The package format: a folder of markdown files with YAML frontmatter, compatible with the open
 * `agentcompanies/v1` layout (COMPANY.md, agents/<slug>/AGENTS.md, projects/<slug>/PROJECT.md,
 * tasks/<slug>/TASK.md, skills/<slug>/SKILL.md) plus a few folders of our own (goals/<slug>/GOAL.md,
 * routines as recurring tasks, issues as tasks with documents and comments). Identity across
 * packages is the slug; references between files are slugs, never database ids. Pure functions:
 * rendering (export) and parsing/validation (import).
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

// ------------------------------------------------------------------ rendering (export)

export function renderPackage(pkg: CompanyPackage): Record<string, string> {
  const files: Record<string, string> = {};
  const c = pkg.company;
  files['COMPANY.md'] = renderMarkdown(
    {
      schema: PACKAGE_SCHEMA,
      kind: 'company',
      slug: c.slug,
      name: c.name,
      description: c.description ?? undefined,
      formatVersion: FORMAT_VERSION,
      brandColor: c.brandColor,
      budgetMonthlyCents: c.budgetMonthlyCents || undefined,
      requireBoardApprovalForNewAgents: c.requireBoardApprovalForNewAgents || undefined,
      requirements: c.secrets.length
        ? { secrets: c.secrets.map((s) => (s.description ? { name: s.name, description: s.description } : { name: s.name })) }
        : undefined,
      labels: c.labels.map((l) => (l.color ? { name: l.name, color: l.color } : { name: l.name })),
      budgetPolicies: c.budgetPolicies,
    },
    c.description,
  );
  for (const a of pkg.agents) {
    files[a.path] = renderMarkdown(
      {
        kind: 'agent',
        slug: a.slug,
        name: a.name,
        role: a.role,
        title: a.title,
        reportsTo: a.reportsTo,
        skills: a.skills,
        capabilities: a.capabilities,
        adapter: { type: a.adapterType, config: a.adapterConfig },
        env: a.env,
        runtimeConfig: a.runtimeConfig,
        budgetMonthlyCents: a.budgetMonthlyCents || undefined,
        metadata: a.metadata,
      },
      a.instructions,
    );
  }
  for (const g of pkg.goals) {
    files[g.path] = renderMarkdown(
      {
        kind: 'goal',
        slug: g.slug,
        name: g.title,
        level: g.level,
        status: g.status,
        parent: g.parent,
        owner: g.owner,
        isCompanyDefault: g.isCompanyDefault || undefined,
      },
      g.description,
    );
  }
  for (const p of pkg.projects) {
    files[p.path] = renderMarkdown(
      {
        kind: 'project',
        slug: p.slug,
        name: p.name,
        status: p.status,
        owner: p.owner,
        goals: p.goals,
        targetDate: p.targetDate,
        color: p.color,
        env: p.env,
        executionWorkspacePolicy: p.executionWorkspacePolicy,
        workspaces: p.workspaces.map((w) => ({ name: w.name, ...(w.isPrimary ? { isPrimary: true } : {}), ...w.config })),
      },
      p.description,
    );
  }
  for (const s of pkg.skills) for (const f of s.files) files[`${s.path}/${f.path}`] = f.content;
  for (const r of pkg.routines) {
    files[r.path] = renderMarkdown(
      {
        kind: 'task',
        slug: r.slug,
        name: r.title,
        recurring: true,
        assignee: r.assignee,
        project: r.project,
        goal: r.goal,
        priority: r.priority,
        status: r.status,
        concurrencyPolicy: r.concurrencyPolicy,
        catchUpPolicy: r.catchUpPolicy,
        triggers: r.triggers,
      },
      r.description,
    );
  }
  for (const i of pkg.issues) {
    files[i.path] = renderMarkdown(
      {
        kind: 'task',
        slug: i.slug,
        name: i.title,
        assignee: i.assignee,
        project: i.project,
        goal: i.goal,
        parent: i.parent,
        status: i.status,
        priority: i.priority,
        labels: i.labels,
        comments: i.comments.map((c) => (c.author ? { author: c.author, body: c.body } : { body: c.body })),
      },
      i.description,
    );
    const dir = posix.dirname(i.path);
    for (const d of i.documents)
      files[`${dir}/documents/${d.key}.md`] = renderMarkdown({ key: d.key, title: d.title, format: d.format }, d.body);
  }
  return files;
}

// ------------------------------------------------------------------ parsing (import)

const str = (v: unknown): string | null => (typeof v === 'string' ? v : typeof v === 'number' ? String(v) : null);
const obj = (v: unknown): Json => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Json) : {});
const strList = (v: unknown): string[] =>
  Array.isArray(v) ? v.map((x) => str(x) ?? str(obj(x).name) ?? str(obj(x).slug)).filter((x): x is string => !!x) : [];
const bool = (v: unknown, d: boolean): boolean => (typeof v === 'boolean' ? v : d);
const int = (file: string, field: string, v: unknown, d: number): number => {
  if (v === undefined || v === null) return d;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 0 || v > 2_147_483_647)
    throw bad(file, `${field} must be a non-negative integer`);
  return v;
};
const requireStr = (file: string, field: string, v: unknown): string => {
  const s = str(v)?.trim();
  if (!s) throw bad(file, `${field} is required`);
  return s;
};

/** A path's folder slug: `agents/<slug>/AGENTS.md` -> `<slug>`. */
const folderSlug = (path: string): string => path.split('/').slice(-2, -1)[0] ?? '';

function parseEnv(file: string, v: unknown): PackageEnv {
  const env: PackageEnv = {};
  for (const [k, raw] of Object.entries(obj(v))) {
    if (typeof raw === 'string') env[k] = raw;
    else if (typeof raw === 'number' || typeof raw === 'boolean') env[k] = String(raw);
    else if (raw && typeof raw === 'object' && (raw as Json).kind === 'secret') {
      const name = str((raw as Json).secret) ?? k;
      env[k] = { kind: 'secret', secret: name };
    } else if (raw && typeof raw === 'object' && (raw as Json).kind === 'plain' && typeof (raw as Json).default === 'string') {
      env[k] = (raw as Json).default as string;
    } else if (raw !== null && raw !== undefined) throw bad(file, `env ${k} must be a string or { kind: secret, secret: NAME }`);
  }
  return env;
}

/** Reads and validates a package: schema version, YAML, required fields, slug references. */
export function parsePackage(input: PackageFiles): CompanyPackage {
  const files = normalizeFiles(input);
  const companyText = files.get('COMPANY.md');
  if (companyText === undefined) throw bad('COMPANY.md', 'missing: a company package has COMPANY.md at its root');
  const { front: cf, body: cbody } = parseMarkdown('COMPANY.md', companyText);
  const schema = str(cf.schema);
  if (schema !== null && !ACCEPTED_SCHEMAS.includes(schema))
    throw bad('COMPANY.md', `unknown package version "${schema}" (supported: ${ACCEPTED_SCHEMAS.join(', ')})`);
  if (cf.formatVersion !== undefined && cf.formatVersion !== FORMAT_VERSION)
    throw bad('COMPANY.md', `unknown formatVersion ${String(cf.formatVersion)} (supported: ${FORMAT_VERSION})`);
  const companyName = requireStr('COMPANY.md', 'name', cf.name);
  const requirements = obj(cf.requirements);
  const company: PkgCompany = {
    slug: str(cf.slug) ?? slugOf(companyName, 'company'),
    name: companyName,
    description: str(cf.description) ?? (cbody || null),
    brandColor: str(cf.brandColor),
    budgetMonthlyCents: int('COMPANY.md', 'budgetMonthlyCents', cf.budgetMonthlyCents, 0),
    requireBoardApprovalForNewAgents: bool(cf.requireBoardApprovalForNewAgents, false),
    labels: (Array.isArray(cf.labels) ? cf.labels : []).map((l) => ({
      name: requireStr('COMPANY.md', 'labels[].name', typeof l === 'string' ? l : obj(l).name),
      color: str(obj(l).color),
    })),
    budgetPolicies: (Array.isArray(cf.budgetPolicies) ? cf.budgetPolicies : []).map((raw) => {
      const p = obj(raw);
      const scopeType = str(p.scopeType) ?? 'company';
      if (!['company', 'agent', 'project'].includes(scopeType)) throw bad('COMPANY.md', `budgetPolicies: unknown scopeType "${scopeType}"`);
      return {
        scopeType: scopeType as PkgBudgetPolicy['scopeType'],
        scope: str(p.scope),
        metric: str(p.metric) ?? 'billed_cents',
        windowKind: str(p.windowKind) ?? (scopeType === 'project' ? 'lifetime' : 'calendar_month_utc'),
        amount: int('COMPANY.md', 'budgetPolicies[].amount', p.amount, 0),
        warnPercent: int('COMPANY.md', 'budgetPolicies[].warnPercent', p.warnPercent, 80),
        hardStopEnabled: bool(p.hardStopEnabled, true),
        notifyEnabled: bool(p.notifyEnabled, true),
        isActive: bool(p.isActive, true),
      };
    }),
    secrets: (Array.isArray(requirements.secrets) ? requirements.secrets : []).map((s) =>
      typeof s === 'string'
        ? { name: s, description: null }
        : { name: requireStr('COMPANY.md', 'requirements.secrets[].name', obj(s).name), description: str(obj(s).description) },
    ),
  };
  const pkg: CompanyPackage = { company, agents: [], goals: [], projects: [], skills: [], routines: [], issues: [] };
  const skillDirs = new Map<string, PkgSkill>();
  const docsByTask = new Map<string, PkgDocument[]>();
  for (const [path, text] of files) {
    const parts = path.split('/');
    if (parts[0] === 'skills' && parts.length >= 3) {
      const dir = `skills/${parts[1]}`;
      const s = skillDirs.get(dir) ?? { path: dir, slug: parts[1], files: [] };
      s.files.push({ path: parts.slice(2).join('/'), content: text });
      skillDirs.set(dir, s);
      continue;
    }
    if (!path.endsWith('.md')) continue;
    if (parts[0] === 'agents' && parts.length === 3 && parts[2] === 'AGENTS.md') {
      const { front: f, body } = parseMarkdown(path, text);
      const name = requireStr(path, 'name', f.name);
      const adapter = obj(f.adapter);
      pkg.agents.push({
        path,
        slug: str(f.slug) ?? folderSlug(path),
        name,
        role: str(f.role) ?? 'general',
        title: str(f.title),
        capabilities: str(f.capabilities) ?? '',
        reportsTo: str(f.reportsTo),
        adapterType: str(adapter.type) ?? str(f.adapterType) ?? DEFAULT_ADAPTER_TYPE,
        adapterConfig: obj(adapter.config),
        env: parseEnv(path, f.env),
        runtimeConfig: obj(f.runtimeConfig),
        budgetMonthlyCents: int(path, 'budgetMonthlyCents', f.budgetMonthlyCents, 0),
        skills: strList(f.skills),
        instructions: body,
        metadata: obj(f.metadata),
      });
    } else if (parts[0] === 'goals' && parts.length === 3 && parts[2] === 'GOAL.md') {
      const { front: f, body } = parseMarkdown(path, text);
      pkg.goals.push({
        path,
        slug: str(f.slug) ?? folderSlug(path),
        title: requireStr(path, 'name', f.name ?? f.title),
        description: body || null,
        level: str(f.level) ?? 'task',
        status: str(f.status) ?? 'planned',
        parent: str(f.parent),
        owner: str(f.owner),
        isCompanyDefault: bool(f.isCompanyDefault, false),
      });
    } else if (parts[0] === 'projects' && parts.length === 3 && parts[2] === 'PROJECT.md') {
      const { front: f, body } = parseMarkdown(path, text);
      const workspaces = (Array.isArray(f.workspaces) ? f.workspaces : []).map((raw, i) => {
        const { name, isPrimary, ...config } = obj(raw);
        return { name: str(name) ?? `workspace-${i + 1}`, isPrimary: bool(isPrimary, false), config };
      });
      pkg.projects.push({
        path,
        slug: str(f.slug) ?? folderSlug(path),
        name: requireStr(path, 'name', f.name),
        description: body || str(f.description),
        status: str(f.status) ?? 'backlog',
        owner: str(f.owner),
        goals: strList(f.goals),
        targetDate: str(f.targetDate),
        color: str(f.color),
        env: parseEnv(path, f.env),
        executionWorkspacePolicy: f.executionWorkspacePolicy ? obj(f.executionWorkspacePolicy) : null,
        workspaces,
      });
    } else if (isTaskPath(parts)) {
      const { front: f, body } = parseMarkdown(path, text);
      const slug = str(f.slug) ?? folderSlug(path);
      const title = requireStr(path, 'name', f.name ?? f.title);
      const projectFromPath = parts[0] === 'projects' ? parts[1] : null;
      if (f.recurring === true || parts[0] === 'routines') {
        const assignee = requireStr(path, 'assignee', f.assignee);
        pkg.routines.push({
          path,
          slug,
          title,
          description: body || null,
          assignee,
          project: str(f.project) ?? projectFromPath,
          goal: str(f.goal),
          priority: str(f.priority) ?? 'medium',
          status: str(f.status) ?? 'active',
          concurrencyPolicy: str(f.concurrencyPolicy),
          catchUpPolicy: str(f.catchUpPolicy),
          triggers: (Array.isArray(f.triggers) ? f.triggers : []).map((t) => {
            const o = obj(t);
            return {
              kind: requireStr(path, 'triggers[].kind', o.kind),
              label: str(o.label),
              enabled: bool(o.enabled, true),
              ...(str(o.cronExpression) ? { cronExpression: str(o.cronExpression)! } : {}),
              ...(str(o.timezone) ? { timezone: str(o.timezone)! } : {}),
            };
          }),
        });
      } else {
        const status = str(f.status) ?? 'todo';
        const priority = str(f.priority) ?? 'medium';
        if (!(ISSUE_STATUSES as readonly string[]).includes(status))
          throw bad(path, `unknown status "${status}" (one of ${ISSUE_STATUSES.join(', ')})`);
        if (!(ISSUE_PRIORITIES as readonly string[]).includes(priority))
          throw bad(path, `unknown priority "${priority}" (one of ${ISSUE_PRIORITIES.join(', ')})`);
        if (title.length > 500) throw bad(path, 'name is longer than 500 characters');
        if (body.length > 100_000) throw bad(path, 'description is longer than 100,000 characters');
        pkg.issues.push({
          path,
          slug,
          title,
          description: body || null,
          status,
          priority,
          assignee: str(f.assignee),
          project: str(f.project) ?? projectFromPath,
          goal: str(f.goal),
          parent: str(f.parent),
          labels: strList(f.labels),
          comments: (Array.isArray(f.comments) ? f.comments : []).map((c) => ({
            author: str(obj(c).author),
            body: requireStr(path, 'comments[].body', obj(c).body),
          })),
          documents: [],
        });
      }
    } else if (parts.length >= 4 && parts[parts.length - 2] === 'documents' && isTaskPath([...parts.slice(0, -2), 'TASK.md'])) {
      const { front: f, body } = parseMarkdown(path, text);
      const taskPath = [...parts.slice(0, -2), 'TASK.md'].join('/');
      const key = str(f.key) ?? parts[parts.length - 1].replace(/\.md$/, '');
      const list = docsByTask.get(taskPath) ?? [];
      list.push({ key, title: str(f.title), format: str(f.format) ?? 'markdown', body });
      docsByTask.set(taskPath, list);
    }
  }
  pkg.skills = [...skillDirs.values()].sort((a, b) => a.slug.localeCompare(b.slug));
  for (const s of pkg.skills) {
    if (!s.files.some((f) => f.path === 'SKILL.md')) throw bad(`${s.path}/SKILL.md`, 'missing: a skill folder needs SKILL.md');
  }
  for (const [taskPath, docs] of docsByTask) {
    const issue = pkg.issues.find((i) => i.path === taskPath);
    if (!issue) throw bad(taskPath, 'missing: documents belong to a task that is not in the package');
    issue.documents = docs;
  }
  // legacy/open-format goals listed in COMPANY.md as plain strings
  if (Array.isArray(cf.goals)) {
    for (const g of cf.goals) {
      const title = str(g);
      if (title)
        pkg.goals.push({
          path: 'COMPANY.md',
          slug: slugOf(title, 'goal'),
          title,
          description: null,
          level: 'company',
          status: 'active',
          parent: null,
          owner: null,
          isCompanyDefault: false,
        });
    }
  }
  for (const list of [pkg.agents, pkg.goals, pkg.projects, pkg.routines, pkg.issues] as Array<Array<{ path: string; slug: string }>>)
    list.sort((a, b) => a.path.localeCompare(b.path));
  assertReferences(pkg);
  return pkg;
}

function isTaskPath(parts: string[]): boolean {
  if (parts[parts.length - 1] !== 'TASK.md') return false;
  return (
    ((parts[0] === 'tasks' || parts[0] === 'routines') && parts.length === 3) ||
    (parts[0] === 'projects' && parts[2] === 'tasks' && parts.length === 5)
  );
}

/** Every slug reference names an entity of the package (or, for skills, of the package or the target). */
function assertReferences(pkg: CompanyPackage): void {
  const uniq = (kind: string, items: Array<{ slug: string; path: string }>) => {
    const seen = new Map<string, string>();
    for (const i of items) {
      if (seen.has(i.slug)) throw bad(i.path, `duplicate ${kind} slug "${i.slug}" (also ${seen.get(i.slug)})`);
      seen.set(i.slug, i.path);
    }
    return seen;
  };
  const agents = uniq('agent', pkg.agents);
  const goals = uniq('goal', pkg.goals);
  const projects = uniq('project', pkg.projects);
  uniq('routine', pkg.routines);
  const issues = uniq('task', pkg.issues);
  const labels = new Set(pkg.company.labels.map((l) => l.name.toLowerCase()));
  const ref = (file: string, field: string, slug: string | null, set: Map<string, string>, kind: string) => {
    if (slug !== null && !set.has(slug)) throw bad(file, `${field} refers to a missing ${kind} slug "${slug}"`);
  };
  for (const a of pkg.agents) ref(a.path, 'reportsTo', a.reportsTo, agents, 'agent');
  for (const g of pkg.goals) {
    ref(g.path, 'parent', g.parent, goals, 'goal');
    ref(g.path, 'owner', g.owner, agents, 'agent');
  }
  for (const p of pkg.projects) {
    ref(p.path, 'owner', p.owner, agents, 'agent');
    for (const g of p.goals) ref(p.path, 'goals', g, goals, 'goal');
  }
  for (const r of pkg.routines) {
    ref(r.path, 'assignee', r.assignee, agents, 'agent');
    ref(r.path, 'project', r.project, projects, 'project');
    ref(r.path, 'goal', r.goal, goals, 'goal');
  }
  for (const i of pkg.issues) {
    ref(i.path, 'assignee', i.assignee, agents, 'agent');
    ref(i.path, 'project', i.project, projects, 'project');
    ref(i.path, 'goal', i.goal, goals, 'goal');
    ref(i.path, 'parent', i.parent, issues, 'task');
    for (const l of i.labels)
      if (!labels.has(l.toLowerCase())) throw bad(i.path, `labels refers to a missing label "${l}" (declare it in COMPANY.md labels)`);
  }
  for (const p of pkg.company.budgetPolicies) {
    if (p.scopeType === 'agent') ref('COMPANY.md', 'budgetPolicies[].scope', p.scope ?? '', agents, 'agent');
    if (p.scopeType === 'project') ref('COMPANY.md', 'budgetPolicies[].scope', p.scope ?? '', projects, 'project');
  }
  // cycles in the org chart and goal tree
  const acyclic = (kind: string, items: Array<{ slug: string; path: string }>, parentOf: (slug: string) => string | null) => {
    for (const i of items) {
      const seen = new Set<string>([i.slug]);
      for (let p = parentOf(i.slug); p !== null; p = parentOf(p)) {
        if (seen.has(p)) throw bad(i.path, `${kind} cycle through "${p}"`);
        seen.add(p);
      }
    }
  };
  const agentBySlug = new Map(pkg.agents.map((a) => [a.slug, a]));
  acyclic('reportsTo', pkg.agents, (s) => agentBySlug.get(s)?.reportsTo ?? null);
  const goalBySlug = new Map(pkg.goals.map((g) => [g.slug, g]));
  acyclic('goal parent', pkg.goals, (s) => goalBySlug.get(s)?.parent ?? null);
  const issueBySlug = new Map(pkg.issues.map((i) => [i.slug, i]));
  acyclic('task parent', pkg.issues, (s) => issueBySlug.get(s)?.parent ?? null);
}

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
