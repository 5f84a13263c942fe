import { Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { ActivityRecorder } from '../../common/activity/activity-recorder.service';
import type { Actor } from '../../common/auth/actor';
import { DomainError } from '../../common/errors/domain-error';
import { AgentLookup } from '../agents/agent-lookup.service';
import { AgentsService } from '../agents/agents.service';
import { BudgetPoliciesService } from '../budgets/budget-policies.service';
import { CompaniesService } from '../companies/companies.service';
import { DocumentsService } from '../documents/documents.service';
import { GoalsService } from '../goals/goals.service';
import { IssuesService, type ImportedIssue } from '../issues/issues.service';
import type { IssueStatus } from '../issues/issue.types';
import { LabelsService } from '../issues/labels.service';
import { ProjectsService } from '../projects/projects.service';
import { WorkspacesService } from '../projects/workspaces.service';
import { parseWorkspacePayload } from '../projects/workspace-rules';
import { RoutinesService } from '../routines/routines.service';
import { SecretsService } from '../secrets/secrets.service';
import { AgentSkillsService } from '../skills/agent-skills.service';
import { SkillsService } from '../skills/skills.service';
import type { CreateRoutineDto } from '../routines/dto/routine.dto';
import type { ImportApplyResponseDto, ImportPlanDto, ImportRequestDto } from './dto/portability.dto';
import { emptyTarget, ImportPlan, planImport, Step, TargetState } from './import-planner';
import { CompanyPackage, Json, PackageEnv, slugOf } from './package-format';
import { parsePackage } from './package-parse';
import { portabilityError } from './portability.errors';

type Ids = Record<string, Map<string, string>>;

/** Preview and apply of a package import: one planner, one transaction, all or nothing. */
@Injectable()
export class PortabilityImportService {
  constructor(
    private readonly companies: CompaniesService,
    private readonly agents: AgentsService,
    private readonly agentLookup: AgentLookup,
    private readonly goals: GoalsService,
    private readonly projects: ProjectsService,
    private readonly workspaces: WorkspacesService,
    private readonly labels: LabelsService,
    private readonly budgets: BudgetPoliciesService,
    private readonly secrets: SecretsService,
    private readonly skills: SkillsService,
    private readonly agentSkills: AgentSkillsService,
    private readonly routines: RoutinesService,
    private readonly issues: IssuesService,
    private readonly documents: DocumentsService,
    private readonly activity: ActivityRecorder,
  ) {}

  async preview(req: ImportRequestDto, targetCompanyId: string | null): Promise<ImportPlanDto> {
    return (await this.plan(req, targetCompanyId)).plan.dto;
  }

  async apply(actor: Actor, req: ImportRequestDto, targetCompanyId: string | null): Promise<ImportApplyResponseDto> {
    const { pkg, plan, target } = await this.plan(req, targetCompanyId);
    const ids: Ids = {};
    let companyId = target.companyId;
    for (const step of plan.steps) {
      if (step.kind === 'issue') continue;
      // a failure rolls back the request's transaction: everything applied so far
      companyId =
        (await this.step(step.item.path, step.item.kind, step.item.slug, () => this.applyStep(actor, pkg, step, companyId, target, ids))) ??
        companyId;
    }
    await this.applyIssues(
      actor,
      plan.steps.flatMap((s) => (s.kind === 'issue' ? [s] : [])),
      companyId!,
      ids,
    );
    await this.activity.record({
      companyId: companyId!,
      action: 'company.imported',
      entityType: 'company',
      entityId: companyId!,
      actor,
      details: {
        mode: plan.dto.mode,
        collisionStrategy: plan.dto.collisionStrategy,
        counts: plan.dto.counts,
        secretsToSet: plan.dto.secretsToSet.map((s) => s.name),
      },
    });
    const out: Record<string, Record<string, string>> = {};
    for (const [kind, m] of Object.entries(ids)) out[kind] = Object.fromEntries(m);
    return { ...plan.dto, companyId: companyId!, ids: out };
  }

  private async plan(
    req: ImportRequestDto,
    targetCompanyId: string | null,
  ): Promise<{ pkg: CompanyPackage; plan: ImportPlan; target: TargetState }> {
    const pkg = parsePackage({ rootPath: req.source.rootPath ?? '', files: req.source.files });
    const target = targetCompanyId ? await this.targetState(targetCompanyId) : emptyTarget();
    const plan = planImport(pkg, target, {
      mode: targetCompanyId ? 'existing_company' : 'new_company',
      strategy: req.collisionStrategy ?? 'rename',
      include: req.include ?? {},
      newCompanyName: req.target?.newCompanyName,
    });
    return { pkg, plan, target };
  }

  private async targetState(companyId: string): Promise<TargetState> {
    const company = await this.companies.getEntity(companyId);
    const t = emptyTarget();
    t.companyId = companyId;
    t.companyName = company.name;
    for (const a of await this.agentLookup.companyAgents(companyId))
      if (a.status !== 'terminated') t.agents.set(a.urlKey, { id: a.id, name: a.name });
    for (const p of await this.projects.list(companyId)) t.projects.set(p.urlKey, { id: p.id, name: p.name });
    for (const g of await this.goals.list(companyId))
      if (!t.goals.has(slugOf(g.title, 'goal'))) t.goals.set(slugOf(g.title, 'goal'), { id: g.id, name: g.title });
    for (const l of await this.labels.list(companyId)) t.labels.set(l.name.toLowerCase(), { id: l.id, name: l.name });
    for (const s of await this.skills.listRecords(companyId))
      t.skills.set(s.slug, { id: s.id, name: s.name, key: s.key, bundled: s.bundled });
    for (const r of await this.routines.listForCompany(companyId)) {
      const slug = slugOf(r.title, 'routine');
      if (!r.managedBy && !t.routines.has(slug)) t.routines.set(slug, { id: r.id, name: r.title });
    }
    for (const s of await this.secrets.list(companyId)) t.secrets.set(s.name, s.id);
    for (const p of (await this.budgets.overview(companyId)).policies)
      t.policies.add(`${p.scopeType}:${p.scopeId}:${p.metric}:${p.windowKind}`);
    return t;
  }

  /** Issues in batches (parents first), then their documents; a failure names the first file of the batch. */
  private async applyIssues(actor: Actor, steps: Array<Extract<Step, { kind: 'issue' }>>, cid: string, ids: Ids): Promise<void> {
    if (!steps.length) return;
    for (const s of steps) this.remember(ids, 'issue', s.issue.slug, randomUUID());
    const items: ImportedIssue[] = steps.map(({ issue: i }) => ({
      id: ids.issue.get(i.slug)!,
      title: i.title,
      description: i.description,
      status: i.status as IssueStatus,
      priority: i.priority,
      projectId: this.idOf(ids, 'project', i.project),
      goalId: this.idOf(ids, 'goal', i.goal),
      parentId: this.idOf(ids, 'issue', i.parent),
      assigneeAgentId: this.idOf(ids, 'agent', i.assignee),
      labelIds: i.labels.map((l) => ids.label?.get(l.toLowerCase())).filter((x): x is string => !!x),
      comments: i.comments.map((c) => c.body),
    }));
    await this.step(steps[0].item.path, 'issue', steps[0].item.slug, () => this.issues.insertImported(cid, items, actor));
    for (const { issue: i, item } of steps) {
      for (const d of i.documents) {
        await this.step(item.path, 'issue', i.slug, () =>
          this.documents.put(actor, cid, ids.issue.get(i.slug)!, d.key, { title: d.title, format: d.format as never, body: d.body }),
        );
      }
    }
  }

  /** Runs one apply step; a domain error becomes 422 import_failed naming the file (the transaction then rolls back). */
  private async step<T>(file: string, kind: string, slug: string, fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      if (!(err instanceof DomainError)) throw err;
      throw portabilityError('import_failed', `${file}: ${err.message} (nothing was imported)`, {
        file,
        problem: err.message,
        kind,
        slug,
        cause: err.code,
      });
    }
  }

  private idOf(ids: Ids, kind: string, slug: string | null): string | null {
    return slug === null ? null : (ids[kind]?.get(slug) ?? null);
  }

  private remember(ids: Ids, kind: string, slug: string, id: string): void {
    (ids[kind] ??= new Map()).set(slug, id);
  }

  /** env of the package -> env bindings of the target: declared secrets bound by name when set, else left out. */
  private env(env: PackageEnv, target: TargetState): Json {
    const out: Json = {};
    for (const [k, v] of Object.entries(env)) {
      if (typeof v === 'string') out[k] = v;
      else if (target.secrets.has(v.secret)) out[k] = { type: 'secret_ref', secretId: target.secrets.get(v.secret), version: 'latest' };
    }
    return out;
  }

  private async record(actor: Actor, companyId: string, step: Step, entityId: string): Promise<void> {
    const verb = step.item.action === 'update' ? 'updated' : 'created';
    await this.activity.record({
      companyId,
      action: `${step.kind}.${verb}`,
      entityType: step.kind,
      entityId,
      actor,
      details: {
        source: 'import',
        slug: step.item.slug,
        path: step.item.path,
        action: step.item.action,
        ...(step.item.targetName ? { name: step.item.targetName } : {}),
      },
    });
  }

  /** Applies one step; returns the company id when the step created the company. */
  private async applyStep(
    actor: Actor,
    pkg: CompanyPackage,
    step: Step,
    companyId: string | null,
    target: TargetState,
    ids: Ids,
  ): Promise<string | void> {
    if (step.kind === 'company') return this.applyCompany(actor, pkg, step, companyId, target);
    const cid = companyId!;
    const item = step.item;
    if (item.action === 'skip') {
      if (item.existingId) this.remember(ids, step.kind, item.slug, item.existingId);
      return;
    }
    const ctx: StepContext = { actor, cid, target, ids, name: item.targetName ?? item.name };
    switch (step.kind) {
      case 'label':
        return this.applyLabel(ctx, step);
      case 'skill':
        return this.applySkill(ctx, step);
      case 'agent':
        return this.applyAgent(ctx, step);
      case 'goal':
        return this.applyGoal(ctx, step);
      case 'project':
        return this.applyProject(ctx, step);
      case 'routine':
        return this.applyRoutine(ctx, step);
      case 'budget_policy':
        return this.applyBudgetPolicy(ctx, pkg, step);
      case 'issue':
        return; // in bulk, see applyIssues
    }
  }

  private async applyCompany(
    actor: Actor,
    pkg: CompanyPackage,
    step: StepOf<'company'>,
    companyId: string | null,
    target: TargetState,
  ): Promise<string | void> {
    const item = step.item;
    const name = item.targetName ?? item.name;
    const c = pkg.company;
    if (item.action === 'create') {
      const created = await this.companies.create(
        {
          name,
          description: c.description,
          budgetMonthlyCents: c.budgetMonthlyCents,
          requireBoardApprovalForNewAgents: c.requireBoardApprovalForNewAgents,
        },
        actor,
      );
      if (c.brandColor) await this.companies.updateBranding(actor, created.id, { brandColor: c.brandColor });
      target.companyId = created.id;
      await this.record(actor, created.id, step, created.id);
      return created.id;
    }
    if (item.action === 'update') {
      await this.companies.updateBranding(actor, companyId!, { name: c.name, description: c.description, brandColor: c.brandColor });
      await this.budgets.setCompanyBudget(companyId!, c.budgetMonthlyCents);
      await this.record(actor, companyId!, step, companyId!);
    }
  }

  private async applyLabel({ actor, cid, ids }: StepContext, step: StepOf<'label'>): Promise<void> {
    const item = step.item;
    const id =
      item.action === 'update'
        ? (await this.labels.update(cid, item.existingId!, { color: step.color })).id
        : (await this.labels.create(cid, { name: item.name, color: step.color })).id;
    this.remember(ids, 'label', item.slug.toLowerCase(), id);
    await this.record(actor, cid, step, id);
    return;
  }

  private async applySkill({ actor, cid, target, ids }: StepContext, step: StepOf<'skill'>): Promise<void> {
    const item = step.item;
    const slug = item.targetName ?? step.skill.slug;
    const key = item.action === 'update' ? target.skills.get(step.skill.slug)?.key : undefined;
    const { imported } = await this.skills.importFromFiles(cid, [{ files: step.skill.files, slug, ...(key ? { key } : {}) }]);
    if (imported[0]) {
      this.remember(ids, 'skill', step.skill.slug, imported[0].key);
      await this.record(actor, cid, step, imported[0].id);
    }
    return;
  }

  private async applyAgent({ actor, cid, target, ids, name }: StepContext, step: StepOf<'agent'>): Promise<void> {
    const item = step.item;
    const a = step.agent;
    const skills = step.skills.map((s) => ids.skill?.get(s) ?? s);
    const adapterConfig: Json = {
      ...a.adapterConfig,
      env: this.env(a.env, target),
      ...(a.instructions ? { instructions: a.instructions } : {}),
    };
    const fields = {
      role: a.role,
      title: a.title,
      capabilities: a.capabilities,
      reportsTo: this.idOf(ids, 'agent', a.reportsTo),
      adapterType: a.adapterType,
      adapterConfig,
      runtimeConfig: a.runtimeConfig,
      budgetMonthlyCents: a.budgetMonthlyCents,
      desiredSkills: skills,
      metadata: a.metadata,
    };
    let id: string;
    if (item.action === 'update') {
      const { desiredSkills, ...rest } = fields;
      id = (await this.agents.update(actor, cid, item.existingId!, { ...rest, name: a.name, replaceAdapterConfig: true })).id;
      await this.agentSkills.sync(actor, cid, id, desiredSkills);
    } else {
      id = (await this.agents.create(actor, cid, { ...fields, name })).id;
    }
    this.remember(ids, 'agent', a.slug, id);
    await this.record(actor, cid, step, id);
    return;
  }

  private async applyGoal({ actor, cid, ids, name }: StepContext, step: StepOf<'goal'>): Promise<void> {
    const item = step.item;
    const g = step.goal;
    const fields = {
      description: g.description,
      level: g.level as never,
      status: g.status as never,
      parentId: this.idOf(ids, 'goal', g.parent),
      ownerAgentId: this.idOf(ids, 'agent', g.owner),
      ...(g.isCompanyDefault ? { isCompanyDefault: true } : {}),
    };
    const id =
      item.action === 'update'
        ? (await this.goals.update(cid, item.existingId!, { ...fields, title: g.title })).id
        : (await this.goals.create(cid, { ...fields, title: name })).id;
    this.remember(ids, 'goal', g.slug, id);
    await this.record(actor, cid, step, id);
    return;
  }

  private async applyProject({ actor, cid, target, ids, name }: StepContext, step: StepOf<'project'>): Promise<void> {
    const item = step.item;
    const p = step.project;
    const fields = {
      description: p.description,
      status: p.status as never,
      leadAgentId: this.idOf(ids, 'agent', p.owner),
      goalIds: p.goals.map((g) => this.idOf(ids, 'goal', g)).filter((x): x is string => !!x),
      targetDate: p.targetDate,
      color: p.color,
      env: this.env(p.env, target),
      executionWorkspacePolicy: p.executionWorkspacePolicy,
    };
    const ordered = [...p.workspaces].sort((x, y) => Number(y.isPrimary) - Number(x.isPrimary));
    let id: string;
    let existingNames = new Set<string>();
    if (item.action === 'update') {
      const updated = await this.projects.update(actor, cid, item.existingId!, { ...fields, name: p.name });
      id = updated.id;
      existingNames = new Set(updated.workspaces.map((w) => w.name));
    } else {
      const first = ordered.shift();
      const created = await this.projects.create(
        cid,
        {
          ...fields,
          name,
          ...(first ? { workspace: { name: first.name, ...first.config } } : {}),
        },
        actor,
      );
      id = created.id;
    }
    for (const w of ordered) {
      if (existingNames.has(w.name)) continue;
      await this.workspaces.create({ id, companyId: cid }, await parseWorkspacePayload({ name: w.name, ...w.config }));
    }
    this.remember(ids, 'project', p.slug, id);
    await this.record(actor, cid, step, id);
    return;
  }

  private async applyRoutine({ actor, cid, ids, name }: StepContext, step: StepOf<'routine'>): Promise<void> {
    const item = step.item;
    const r = step.routine;
    const assignee = this.idOf(ids, 'agent', r.assignee);
    if (!assignee) return;
    const dto = {
      title: name,
      description: r.description,
      assigneeAgentId: assignee,
      projectId: this.idOf(ids, 'project', r.project),
      goalId: this.idOf(ids, 'goal', r.goal),
      priority: r.priority,
      status: r.status as never,
      ...(r.concurrencyPolicy ? { concurrencyPolicy: r.concurrencyPolicy as never } : {}),
      ...(r.catchUpPolicy ? { catchUpPolicy: r.catchUpPolicy as never } : {}),
    };
    const triggers = r.triggers.map((t) => ({ ...t, kind: t.kind as never }));
    const id =
      item.action === 'update'
        ? (await this.routines.updateForCompany(cid, item.existingId!, { ...dto, title: r.title }, actor)).id
        : (await this.routines.createForCompany(cid, { ...dto, triggers } as CreateRoutineDto, actor)).id;
    this.remember(ids, 'routine', r.slug, id);
    await this.record(actor, cid, step, id);
    return;
  }

  private async applyBudgetPolicy({ actor, cid, ids }: StepContext, pkg: CompanyPackage, step: StepOf<'budget_policy'>): Promise<void> {
    const p = pkg.company.budgetPolicies[step.index];
    const scopeId = p.scopeType === 'company' ? cid : this.idOf(ids, p.scopeType, p.scope);
    if (!scopeId) return;
    const { policy } = await this.budgets.upsert(cid, {
      scopeType: p.scopeType,
      scopeId,
      metric: p.metric as never,
      windowKind: p.windowKind as never,
      amount: p.amount,
      warnPercent: p.warnPercent,
      hardStopEnabled: p.hardStopEnabled,
      notifyEnabled: p.notifyEnabled,
      isActive: p.isActive,
    });
    await this.record(actor, cid, step, policy.id);
    return;
  }
}

/** What every step but the company's works with. */
interface StepContext {
  actor: Actor;
  cid: string;
  target: TargetState;
  ids: Ids;
  /** the name the entity gets in the target (a rename's new name) */
  name: string;
}

type StepOf<K extends Step['kind']> = Extract<Step, { kind: K }>;
