import { urlKeyOf } from '../../common/http/url-key';
import type { CollisionStrategy, ImportIncludeDto, ImportPlanDto, PlanItemDto, SecretToSetDto } from './dto/portability.dto';
import {
  CompanyPackage,
  PackageEnv,
  parentsFirst,
  PkgAgent,
  PkgGoal,
  PkgIssue,
  PkgProject,
  PkgRoutine,
  PkgSkill,
  slugOf,
} from './package-format';

/** What the target company already holds, by package identity (slug). */
export interface TargetState {
  companyId: string | null;
  companyName: string | null;
  agents: Map<string, { id: string; name: string }>;
  projects: Map<string, { id: string; name: string }>;
  goals: Map<string, { id: string; name: string }>;
  /** by lower-case name */
  labels: Map<string, { id: string; name: string }>;
  skills: Map<string, { id: string; name: string; key: string; bundled: boolean }>;
  routines: Map<string, { id: string; name: string }>;
  secrets: Map<string, string>;
  /** `${scopeType}:${scopeId}:${metric}:${windowKind}` */
  policies: Set<string>;
}

export const emptyTarget = (): TargetState => ({
  companyId: null,
  companyName: null,
  agents: new Map(),
  projects: new Map(),
  goals: new Map(),
  labels: new Map(),
  skills: new Map(),
  routines: new Map(),
  secrets: new Map(),
  policies: new Set(),
});

export type Step =
  | { kind: 'company'; item: PlanItemDto }
  | { kind: 'label'; item: PlanItemDto; color: string | null }
  | { kind: 'skill'; item: PlanItemDto; skill: PkgSkill }
  | { kind: 'agent'; item: PlanItemDto; agent: PkgAgent; skills: string[] }
  | { kind: 'goal'; item: PlanItemDto; goal: PkgGoal }
  | { kind: 'project'; item: PlanItemDto; project: PkgProject }
  | { kind: 'routine'; item: PlanItemDto; routine: PkgRoutine }
  | { kind: 'budget_policy'; item: PlanItemDto; index: number }
  | { kind: 'issue'; item: PlanItemDto; issue: PkgIssue };

export interface ImportPlan {
  dto: ImportPlanDto;
  steps: Step[];
}

/**
 * The one planner behind preview and apply: decides for every entity of the package whether it is
 * created, updated, skipped or renamed in the target, in the order apply runs (references first).
 */
export function planImport(
  pkg: CompanyPackage,
  target: TargetState,
  opts: { mode: 'new_company' | 'existing_company'; strategy: CollisionStrategy; include: ImportIncludeDto; newCompanyName?: string },
): ImportPlan {
  const inc = (k: keyof ImportIncludeDto) => opts.include[k] !== false;
  const steps: Step[] = [];
  const warnings: string[] = [];
  const secretsToSet = new Map<string, SecretToSetDto>();
  const strategy = opts.strategy;

  const resolve = (
    kind: string,
    slug: string,
    path: string,
    name: string,
    existing: { id: string; name: string } | undefined,
    freeName: () => string,
  ): PlanItemDto => {
    if (!existing) return { kind, slug, path, action: 'create', name };
    if (strategy === 'skip') return { kind, slug, path, action: 'skip', name, existingId: existing.id };
    if (strategy === 'replace') return { kind, slug, path, action: 'update', name, existingId: existing.id };
    return { kind, slug, path, action: 'rename', name, targetName: freeName(), existingId: existing.id };
  };
  /** `Name 2`, `Name 3`, ... whose slug is free among `taken` (the slug is then taken) */
  const renamer = (name: string, taken: Set<string>, keyOf: (n: string) => string) => () => {
    for (let n = 2; ; n++) {
      const candidate = `${name} ${n}`;
      const key = keyOf(candidate);
      if (!taken.has(key)) {
        taken.add(key);
        return candidate;
      }
    }
  };

  // company
  if (opts.mode === 'new_company') {
    steps.push({
      kind: 'company',
      item: {
        kind: 'company',
        slug: pkg.company.slug,
        path: 'COMPANY.md',
        action: 'create',
        name: opts.newCompanyName ?? pkg.company.name,
      },
    });
  } else if (inc('company')) {
    const item: PlanItemDto =
      strategy === 'replace'
        ? {
            kind: 'company',
            slug: pkg.company.slug,
            path: 'COMPANY.md',
            action: 'update',
            name: pkg.company.name,
            existingId: target.companyId,
          }
        : {
            kind: 'company',
            slug: pkg.company.slug,
            path: 'COMPANY.md',
            action: 'skip',
            name: target.companyName ?? pkg.company.name,
            existingId: target.companyId,
          };
    steps.push({ kind: 'company', item });
  }

  // labels: identity is the name; an existing label is reused (replace: its color is updated)
  for (const l of pkg.company.labels) {
    const existing = target.labels.get(l.name.toLowerCase());
    const item: PlanItemDto = !existing
      ? { kind: 'label', slug: l.name.toLowerCase(), path: 'COMPANY.md', action: 'create', name: l.name }
      : {
          kind: 'label',
          slug: l.name.toLowerCase(),
          path: 'COMPANY.md',
          action: strategy === 'replace' ? 'update' : 'skip',
          name: l.name,
          existingId: existing.id,
        };
    steps.push({ kind: 'label', item, color: l.color });
  }

  // skills before agents (agents name them)
  const availableSkills = new Set<string>(target.skills.keys());
  if (inc('skills')) {
    const taken = new Set(target.skills.keys());
    for (const s of pkg.skills) {
      const existing = target.skills.get(s.slug);
      if (existing?.bundled) {
        steps.push({
          kind: 'skill',
          item: { kind: 'skill', slug: s.slug, path: `${s.path}/SKILL.md`, action: 'skip', name: s.slug, existingId: existing.id },
          skill: s,
        });
        warnings.push(`${s.path}/SKILL.md: a bundled skill "${s.slug}" exists; kept as shipped`);
        continue;
      }
      const item = resolve('skill', s.slug, `${s.path}/SKILL.md`, s.slug, existing, () => {
        for (let n = 2; ; n++) if (!taken.has(`${s.slug}-${n}`)) return (taken.add(`${s.slug}-${n}`), `${s.slug}-${n}`);
      });
      steps.push({ kind: 'skill', item, skill: s });
      availableSkills.add(s.slug);
    }
  }

  const envSecrets = (path: string, env: PackageEnv) => {
    for (const v of Object.values(env)) {
      if (typeof v === 'string' || target.secrets.has(v.secret)) continue;
      const decl = pkg.company.secrets.find((s) => s.name === v.secret);
      const entry = secretsToSet.get(v.secret) ?? { name: v.secret, description: decl?.description ?? null, usedBy: [] };
      if (!entry.usedBy.includes(path)) entry.usedBy.push(path);
      secretsToSet.set(v.secret, entry);
    }
  };

  // agents, managers first
  if (inc('agents')) {
    const taken = new Set(target.agents.keys());
    for (const a of pkg.agents) taken.add(urlKeyOf(a.name, 'agent'));
    for (const a of parentsFirst(pkg.agents, (x) => x.reportsTo)) {
      const item = resolve(
        'agent',
        a.slug,
        a.path,
        a.name,
        target.agents.get(a.slug),
        renamer(a.name, taken, (n) => urlKeyOf(n, 'agent')),
      );
      const skills = a.skills.filter((s) => {
        if (availableSkills.has(s)) return true;
        warnings.push(`${a.path}: skill "${s}" is neither in the package nor in the company; not attached`);
        return false;
      });
      envSecrets(a.path, a.env);
      steps.push({ kind: 'agent', item, agent: a, skills });
    }
  }

  if (inc('goals')) {
    const taken = new Set(target.goals.keys());
    for (const g of parentsFirst(pkg.goals, (x) => x.parent)) {
      steps.push({
        kind: 'goal',
        item: resolve(
          'goal',
          g.slug,
          g.path,
          g.title,
          target.goals.get(g.slug),
          renamer(g.title, taken, (n) => slugOf(n, 'goal')),
        ),
        goal: g,
      });
    }
  }

  if (inc('projects')) {
    const taken = new Set(target.projects.keys());
    for (const p of pkg.projects) taken.add(urlKeyOf(p.name, 'project'));
    for (const p of pkg.projects) {
      envSecrets(p.path, p.env);
      steps.push({
        kind: 'project',
        item: resolve(
          'project',
          p.slug,
          p.path,
          p.name,
          target.projects.get(p.slug),
          renamer(p.name, taken, (n) => urlKeyOf(n, 'project')),
        ),
        project: p,
      });
    }
  }

  if (inc('routines')) {
    const taken = new Set(target.routines.keys());
    for (const r of pkg.routines) {
      if (!inc('agents') && !target.agents.has(r.assignee)) {
        warnings.push(`${r.path}: assignee "${r.assignee}" is not imported; routine left out`);
        continue;
      }
      steps.push({
        kind: 'routine',
        item: resolve(
          'routine',
          r.slug,
          r.path,
          r.title,
          target.routines.get(r.slug),
          renamer(r.title, taken, (n) => slugOf(n, 'routine')),
        ),
        routine: r,
      });
    }
  }

  pkg.company.budgetPolicies.forEach((p, index) => {
    const scopeId =
      p.scopeType === 'company'
        ? target.companyId
        : p.scopeType === 'agent'
          ? target.agents.get(p.scope ?? '')?.id
          : target.projects.get(p.scope ?? '')?.id;
    const exists = !!scopeId && target.policies.has(`${p.scopeType}:${scopeId}:${p.metric}:${p.windowKind}`);
    const slug = `${p.scopeType}${p.scope ? `:${p.scope}` : ''}:${p.metric}:${p.windowKind}`;
    const item: PlanItemDto = {
      kind: 'budget_policy',
      slug,
      path: 'COMPANY.md',
      name: slug,
      action: !exists ? 'create' : strategy === 'skip' ? 'skip' : 'update',
    };
    steps.push({ kind: 'budget_policy', item, index });
  });

  // issues are always new (their identifiers are the target company's)
  if (inc('issues')) {
    for (const i of parentsFirst(pkg.issues, (x) => x.parent)) {
      if (i.assignee && !inc('agents') && !target.agents.has(i.assignee))
        warnings.push(`${i.path}: assignee "${i.assignee}" is not imported; left unassigned`);
      steps.push({ kind: 'issue', item: { kind: 'issue', slug: i.slug, path: i.path, action: 'create', name: i.title }, issue: i });
    }
    if (pkg.issues.some((i) => i.comments.some((c) => c.author)))
      warnings.push('tasks: comments are imported with the importing caller as author (the original author is named in the package only)');
  }

  for (const s of pkg.company.secrets) {
    if (!target.secrets.has(s.name) && !secretsToSet.has(s.name))
      secretsToSet.set(s.name, { name: s.name, description: s.description, usedBy: ['COMPANY.md'] });
  }
  for (const s of secretsToSet.values())
    warnings.push(`secret "${s.name}" is not set in the company: its env bindings are left out until it is created`);

  const items = steps.map((s) => s.item);
  const counts: Record<string, number> = {};
  for (const i of items) counts[`${i.kind}.${i.action}`] = (counts[`${i.kind}.${i.action}`] ?? 0) + 1;
  return {
    steps,
    dto: {
      mode: opts.mode,
      companyId: target.companyId,
      companyName: opts.mode === 'new_company' ? (opts.newCompanyName ?? pkg.company.name) : (target.companyName ?? pkg.company.name),
      collisionStrategy: strategy,
      creates: items.filter((i) => i.action === 'create'),
      updates: items.filter((i) => i.action === 'update'),
      skips: items.filter((i) => i.action === 'skip'),
      renames: items.filter((i) => i.action === 'rename'),
      conflicts: items.filter((i) => i.existingId && i.kind !== 'company' && (i.kind !== 'label' || strategy === 'replace')),
      warnings,
      secretsToSet: [...secretsToSet.values()],
      counts,
    },
  };
}
