import { ISSUE_PRIORITIES, ISSUE_STATUSES } from '../issues/issue.types';
import {
  ACCEPTED_SCHEMAS,
  bad,
  CompanyPackage,
  DEFAULT_ADAPTER_TYPE,
  FORMAT_VERSION,
  Json,
  normalizeFiles,
  PackageEnv,
  PackageFiles,
  parseMarkdown,
  PkgAgent,
  PkgBudgetPolicy,
  PkgCompany,
  PkgDocument,
  PkgGoal,
  PkgIssue,
  PkgProject,
  PkgRoutine,
  PkgSkill,
  slugOf,
} from './package-format';
import { assertReferences } from './package-references';

/**
 * Parsing and validation of a package (import): COMPANY.md, then each file by its place in the
 * layout (one step per kind of entity), then the checks across files (package-references.ts).
 */

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

/** What the walk over the files gathers besides the package's lists. */
interface Gathered {
  skillDirs: Map<string, PkgSkill>;
  docsByTask: Map<string, PkgDocument[]>;
}

/** Reads and validates a package: schema version, YAML, required fields, slug references. */
export function parsePackage(input: PackageFiles): CompanyPackage {
  const files = normalizeFiles(input);
  const companyText = files.get('COMPANY.md');
  if (companyText === undefined) throw bad('COMPANY.md', 'missing: a company package has COMPANY.md at its root');
  const { front: cf, body: cbody } = parseMarkdown('COMPANY.md', companyText);
  const pkg: CompanyPackage = {
    company: parseCompany(cf, cbody),
    agents: [],
    goals: [],
    projects: [],
    skills: [],
    routines: [],
    issues: [],
  };
  const gathered: Gathered = { skillDirs: new Map(), docsByTask: new Map() };
  for (const [path, text] of files) parseFile(pkg, gathered, path, text);
  pkg.skills = [...gathered.skillDirs.values()].sort((a, b) => a.slug.localeCompare(b.slug));
  for (const s of pkg.skills) {
    if (!s.files.some((f) => f.path === 'SKILL.md')) throw bad(`${s.path}/SKILL.md`, 'missing: a skill folder needs SKILL.md');
  }
  for (const [taskPath, docs] of gathered.docsByTask) {
    const issue = pkg.issues.find((i) => i.path === taskPath);
    if (!issue) throw bad(taskPath, 'missing: documents belong to a task that is not in the package');
    issue.documents = docs;
  }
  pkg.goals.push(...legacyGoals(cf));
  for (const list of [pkg.agents, pkg.goals, pkg.projects, pkg.routines, pkg.issues] as Array<Array<{ path: string; slug: string }>>)
    list.sort((a, b) => a.path.localeCompare(b.path));
  assertReferences(pkg);
  return pkg;
}

/** One file of the package, by its place in the layout. */
function parseFile(pkg: CompanyPackage, gathered: Gathered, path: string, text: string): void {
  const parts = path.split('/');
  if (parts[0] === 'skills' && parts.length >= 3) {
    const dir = `skills/${parts[1]}`;
    const s = gathered.skillDirs.get(dir) ?? { path: dir, slug: parts[1], files: [] };
    s.files.push({ path: parts.slice(2).join('/'), content: text });
    gathered.skillDirs.set(dir, s);
    return;
  }
  if (!path.endsWith('.md')) return;
  if (parts[0] === 'agents' && parts.length === 3 && parts[2] === 'AGENTS.md') pkg.agents.push(parseAgent(path, text));
  else if (parts[0] === 'goals' && parts.length === 3 && parts[2] === 'GOAL.md') pkg.goals.push(parseGoal(path, text));
  else if (parts[0] === 'projects' && parts.length === 3 && parts[2] === 'PROJECT.md') pkg.projects.push(parseProject(path, text));
  else if (isTaskPath(parts)) {
    const task = parseTask(path, parts, text);
    if (task.kind === 'routine') pkg.routines.push(task.routine);
    else pkg.issues.push(task.issue);
  } else if (parts.length >= 4 && parts[parts.length - 2] === 'documents' && isTaskPath([...parts.slice(0, -2), 'TASK.md'])) {
    const { front: f, body } = parseMarkdown(path, text);
    const taskPath = [...parts.slice(0, -2), 'TASK.md'].join('/');
    const key = str(f.key) ?? parts[parts.length - 1].replace(/\.md$/, '');
    const list = gathered.docsByTask.get(taskPath) ?? [];
    list.push({ key, title: str(f.title), format: str(f.format) ?? 'markdown', body });
    gathered.docsByTask.set(taskPath, list);
  }
}

function parseCompany(cf: Json, cbody: string): PkgCompany {
  const schema = str(cf.schema);
  if (schema !== null && !ACCEPTED_SCHEMAS.includes(schema))
    throw bad('COMPANY.md', `unknown package version "${schema}" (supported: ${ACCEPTED_SCHEMAS.join(', ')})`);
  if (cf.formatVersion !== undefined && cf.formatVersion !== FORMAT_VERSION)
    throw bad('COMPANY.md', `unknown formatVersion ${String(cf.formatVersion)} (supported: ${FORMAT_VERSION})`);
  const companyName = requireStr('COMPANY.md', 'name', cf.name);
  const requirements = obj(cf.requirements);
  return {
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
    budgetPolicies: (Array.isArray(cf.budgetPolicies) ? cf.budgetPolicies : []).map(parseBudgetPolicy),
    secrets: (Array.isArray(requirements.secrets) ? requirements.secrets : []).map((s) =>
      typeof s === 'string'
        ? { name: s, description: null }
        : { name: requireStr('COMPANY.md', 'requirements.secrets[].name', obj(s).name), description: str(obj(s).description) },
    ),
  };
}

function parseBudgetPolicy(raw: unknown): PkgBudgetPolicy {
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
}

function parseAgent(path: string, text: string): PkgAgent {
  const { front: f, body } = parseMarkdown(path, text);
  const name = requireStr(path, 'name', f.name);
  const adapter = obj(f.adapter);
  return {
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
  };
}

function parseGoal(path: string, text: string): PkgGoal {
  const { front: f, body } = parseMarkdown(path, text);
  return {
    path,
    slug: str(f.slug) ?? folderSlug(path),
    title: requireStr(path, 'name', f.name ?? f.title),
    description: body || null,
    level: str(f.level) ?? 'task',
    status: str(f.status) ?? 'planned',
    parent: str(f.parent),
    owner: str(f.owner),
    isCompanyDefault: bool(f.isCompanyDefault, false),
  };
}

function parseProject(path: string, text: string): PkgProject {
  const { front: f, body } = parseMarkdown(path, text);
  const workspaces = (Array.isArray(f.workspaces) ? f.workspaces : []).map((raw, i) => {
    const { name, isPrimary, ...config } = obj(raw);
    return { name: str(name) ?? `workspace-${i + 1}`, isPrimary: bool(isPrimary, false), config };
  });
  return {
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
  };
}

/** A TASK.md: a routine when recurring (or under routines/), an issue otherwise. */
function parseTask(
  path: string,
  parts: string[],
  text: string,
): { kind: 'routine'; routine: PkgRoutine } | { kind: 'issue'; issue: PkgIssue } {
  const { front: f, body } = parseMarkdown(path, text);
  const slug = str(f.slug) ?? folderSlug(path);
  const title = requireStr(path, 'name', f.name ?? f.title);
  const projectFromPath = parts[0] === 'projects' ? parts[1] : null;
  if (f.recurring === true || parts[0] === 'routines') {
    const assignee = requireStr(path, 'assignee', f.assignee);
    const routine: PkgRoutine = {
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
    };
    return { kind: 'routine', routine };
  }
  const status = str(f.status) ?? 'todo';
  const priority = str(f.priority) ?? 'medium';
  if (!(ISSUE_STATUSES as readonly string[]).includes(status))
    throw bad(path, `unknown status "${status}" (one of ${ISSUE_STATUSES.join(', ')})`);
  if (!(ISSUE_PRIORITIES as readonly string[]).includes(priority))
    throw bad(path, `unknown priority "${priority}" (one of ${ISSUE_PRIORITIES.join(', ')})`);
  if (title.length > 500) throw bad(path, 'name is longer than 500 characters');
  if (body.length > 100_000) throw bad(path, 'description is longer than 100,000 characters');
  const issue: PkgIssue = {
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
  };
  return { kind: 'issue', issue };
}

/** Legacy/open-format goals listed in COMPANY.md as plain strings. */
function legacyGoals(cf: Json): PkgGoal[] {
  if (!Array.isArray(cf.goals)) return [];
  const out: PkgGoal[] = [];
  for (const g of cf.goals) {
    const title = str(g);
    if (title)
      out.push({
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
  return out;
}

function isTaskPath(parts: string[]): boolean {
  if (parts[parts.length - 1] !== 'TASK.md') return false;
  return (
    ((parts[0] === 'tasks' || parts[0] === 'routines') && parts.length === 3) ||
    (parts[0] === 'projects' && parts[2] === 'tasks' && parts.length === 5)
  );
}
