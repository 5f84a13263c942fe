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

/** How an import is asked for. */
export interface PlanOptions {
  mode: 'new_company' | 'existing_company';
  strategy: CollisionStrategy;
  include: ImportIncludeDto;
  newCompanyName?: string;
}

/**
 * The one planner behind preview and apply: decides for every entity of the package whether it is
 * created, updated, skipped or renamed in the target, in the order apply runs (references first).
 */
export function planImport(pkg: CompanyPackage, target: TargetState, opts: PlanOptions): ImportPlan {
  const planner = new Planner(pkg, target, opts);
  planner.company();
  planner.labels();
  planner.skills();
  planner.agents();
  planner.goals();
  planner.projects();
  planner.routines();
  planner.budgetPolicies();
  planner.issues();
  planner.secrets();
  return planner.result();
}

/** The planner's steps, one method per kind of entity, run in apply's order. */
class Planner {
  private readonly steps: Step[] = [];
  private readonly warnings: string[] = [];
  private readonly secretsToSet = new Map<string, SecretToSetDto>();
  /** skills an agent may name: the company's and the package's imported ones */
  private readonly availableSkills: Set<string>;
  private readonly strategy: CollisionStrategy;

  constructor(
    private readonly pkg: CompanyPackage,
    private readonly target: TargetState,
    private readonly opts: PlanOptions,
  ) {
    this.strategy = opts.strategy;
    this.availableSkills = new Set<string>(target.skills.keys());
  }

  private inc(k: keyof ImportIncludeDto): boolean {
    return this.opts.include[k] !== false;
  }

  private resolve(
    kind: string,
    slug: string,
    path: string,
    name: string,
    existing: { id: string; name: string } | undefined,
    freeName: () => string,
  ): PlanItemDto {
    if (!existing) return { kind, slug, path, action: 'create', name };
    if (this.strategy === 'skip') return { kind, slug, path, action: 'skip', name, existingId: existing.id };
    if (this.strategy === 'replace') return { kind, slug, path, action: 'update', name, existingId: existing.id };
    return { kind, slug, path, action: 'rename', name, targetName: freeName(), existingId: existing.id };
  }

  /** The package's secrets an env names that the company does not hold yet. */
  private envSecrets(path: string, env: PackageEnv): void {
    for (const v of Object.values(env)) {
      if (typeof v === 'string' || this.target.secrets.has(v.secret)) continue;
      const decl = this.pkg.company.secrets.find((s) => s.name === v.secret);
      const entry = this.secretsToSet.get(v.secret) ?? { name: v.secret, description: decl?.description ?? null, usedBy: [] };
      if (!entry.usedBy.includes(path)) entry.usedBy.push(path);
      this.secretsToSet.set(v.secret, entry);
    }
  }

  company(): void {
    const { pkg, target, opts } = this;
    if (opts.mode === 'new_company') {
      this.steps.push({
        kind: 'company',
        item: {
          kind: 'company',
          slug: pkg.company.slug,
          path: 'COMPANY.md',
          action: 'create',
          name: opts.newCompanyName ?? pkg.company.name,
        },
      });
    } else if (this.inc('company')) {
      const item: PlanItemDto =
        this.strategy === 'replace'
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
      this.steps.push({ kind: 'company', item });
    }
  }

  /** Labels: identity is the name; an existing label is reused (replace: its color is updated). */
  labels(): void {
    for (const l of this.pkg.company.labels) {
      const existing = this.target.labels.get(l.name.toLowerCase());
      const item: PlanItemDto = !existing
        ? { kind: 'label', slug: l.name.toLowerCase(), path: 'COMPANY.md', action: 'create', name: l.name }
        : {
            kind: 'label',
            slug: l.name.toLowerCase(),
            path: 'COMPANY.md',
            action: this.strategy === 'replace' ? 'update' : 'skip',
            name: l.name,
            existingId: existing.id,
          };
      this.steps.push({ kind: 'label', item, color: l.color });
    }
  }

  /** Skills before agents (agents name them). */
  skills(): void {
    if (!this.inc('skills')) return;
    const taken = new Set(this.target.skills.keys());
    for (const s of this.pkg.skills) {
      const existing = this.target.skills.get(s.slug);
      if (existing?.bundled) {
        this.steps.push({
          kind: 'skill',
          item: { kind: 'skill', slug: s.slug, path: `${s.path}/SKILL.md`, action: 'skip', name: s.slug, existingId: existing.id },
          skill: s,
        });
        this.warnings.push(`${s.path}/SKILL.md: a bundled skill "${s.slug}" exists; kept as shipped`);
        continue;
      }
      const item = this.resolve('skill', s.slug, `${s.path}/SKILL.md`, s.slug, existing, () => {
        for (let n = 2; ; n++) if (!taken.has(`${s.slug}-${n}`)) return (taken.add(`${s.slug}-${n}`), `${s.slug}-${n}`);
      });
      this.steps.push({ kind: 'skill', item, skill: s });
      this.availableSkills.add(s.slug);
    }
  }

  /** Agents, managers first. */
  agents(): void {
    if (!this.inc('agents')) return;
    const taken = new Set(this.target.agents.keys());
    for (const a of this.pkg.agents) taken.add(urlKeyOf(a.name, 'agent'));
    for (const a of parentsFirst(this.pkg.agents, (x) => x.reportsTo)) {
      const item = this.resolve(
        'agent',
        a.slug,
        a.path,
        a.name,
        this.target.agents.get(a.slug),
        renamer(a.name, taken, (n) => urlKeyOf(n, 'agent')),
      );
      const skills = a.skills.filter((s) => {
        if (this.availableSkills.has(s)) return true;
        this.warnings.push(`${a.path}: skill "${s}" is neither in the package nor in the company; not attached`);
        return false;
      });
      this.envSecrets(a.path, a.env);
      this.steps.push({ kind: 'agent', item, agent: a, skills });
    }
  }

  goals(): void {
    if (!this.inc('goals')) return;
    const taken = new Set(this.target.goals.keys());
    for (const g of parentsFirst(this.pkg.goals, (x) => x.parent)) {
      const item = this.resolve(
        'goal',
        g.slug,
        g.path,
        g.title,
        this.target.goals.get(g.slug),
        renamer(g.title, taken, (n) => slugOf(n, 'goal')),
      );
      this.steps.push({ kind: 'goal', item, goal: g });
    }
  }

  projects(): void {
    if (!this.inc('projects')) return;
    const taken = new Set(this.target.projects.keys());
    for (const p of this.pkg.projects) taken.add(urlKeyOf(p.name, 'project'));
    for (const p of this.pkg.projects) {
      this.envSecrets(p.path, p.env);
      const item = this.resolve(
        'project',
        p.slug,
        p.path,
        p.name,
        this.target.projects.get(p.slug),
        renamer(p.name, taken, (n) => urlKeyOf(n, 'project')),
      );
      this.steps.push({ kind: 'project', item, project: p });
    }
  }

  routines(): void {
    if (!this.inc('routines')) return;
    const taken = new Set(this.target.routines.keys());
    for (const r of this.pkg.routines) {
      if (!this.inc('agents') && !this.target.agents.has(r.assignee)) {
        this.warnings.push(`${r.path}: assignee "${r.assignee}" is not imported; routine left out`);
        continue;
      }
      const item = this.resolve(
        'routine',
        r.slug,
        r.path,
        r.title,
        this.target.routines.get(r.slug),
        renamer(r.title, taken, (n) => slugOf(n, 'routine')),
      );
      this.steps.push({ kind: 'routine', item, routine: r });
    }
  }

  budgetPolicies(): void {
    const target = this.target;
    this.pkg.company.budgetPolicies.forEach((p, index) => {
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
        action: !exists ? 'create' : this.strategy === 'skip' ? 'skip' : 'update',
      };
      this.steps.push({ kind: 'budget_policy', item, index });
    });
  }

  /** Issues are always new (their identifiers are the target company's). */
  issues(): void {
    if (!this.inc('issues')) return;
    for (const i of parentsFirst(this.pkg.issues, (x) => x.parent)) {
      if (i.assignee && !this.inc('agents') && !this.target.agents.has(i.assignee))
        this.warnings.push(`${i.path}: assignee "${i.assignee}" is not imported; left unassigned`);
      this.steps.push({ kind: 'issue', item: { kind: 'issue', slug: i.slug, path: i.path, action: 'create', name: i.title }, issue: i });
    }
    if (this.pkg.issues.some((i) => i.comments.some((c) => c.author)))
      this.warnings.push(
        'tasks: comments are imported with the importing caller as author (the original author is named in the package only)',
      );
  }

  /** Declared secrets the company does not hold, and a warning for each secret to set. */
  secrets(): void {
    for (const s of this.pkg.company.secrets) {
      if (!this.target.secrets.has(s.name) && !this.secretsToSet.has(s.name))
        this.secretsToSet.set(s.name, { name: s.name, description: s.description, usedBy: ['COMPANY.md'] });
    }
    for (const s of this.secretsToSet.values())
      this.warnings.push(`secret "${s.name}" is not set in the company: its env bindings are left out until it is created`);
  }

  result(): ImportPlan {
    const { pkg, target, opts, strategy } = this;
    const items = this.steps.map((s) => s.item);
    const counts: Record<string, number> = {};
    for (const i of items) counts[`${i.kind}.${i.action}`] = (counts[`${i.kind}.${i.action}`] ?? 0) + 1;
    return {
      steps: this.steps,
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
        warnings: this.warnings,
        secretsToSet: [...this.secretsToSet.values()],
        counts,
      },
    };
  }
}

/** `Name 2`, `Name 3`, ... whose slug is free among `taken` (the slug is then taken). */
function renamer(name: string, taken: Set<string>, keyOf: (n: string) => string): () => string {
  return () => {
    for (let n = 2; ; n++) {
      const candidate = `${name} ${n}`;
      const key = keyOf(candidate);
      if (!taken.has(key)) {
        taken.add(key);
        return candidate;
      }
    }
  };
}
