import { Injectable } from '@nestjs/common';
import { AgentLookup } from '../agents/agent-lookup.service';
import { desiredSkillsOf, SKILL_SYNC_KEY } from '../agents/agent-fields';
import { BudgetPoliciesService } from '../budgets/budget-policies.service';
import { CompaniesService } from '../companies/companies.service';
import { DocumentsService } from '../documents/documents.service';
import { GoalsService } from '../goals/goals.service';
import { IssueComments } from '../issues/issue-comments.service';
import { IssueStore } from '../issues/issue-store.service';
import { LabelsService } from '../issues/labels.service';
import { ProjectsService } from '../projects/projects.service';
import { RoutinesService } from '../routines/routines.service';
import { SecretsService } from '../secrets/secrets.service';
import { SkillsService } from '../skills/skills.service';
import type { ExportSelectionDto } from './dto/portability.dto';
import { CompanyPackage, Json, PkgAgent, PkgCompany, PkgGoal, PkgIssue, PkgProject, PkgRoutine, PkgSkill, slugOf } from './package-format';
import { renderPackage } from './package-render';
import { ExportScrubber, redactValues } from './sanitize';

export interface ExportResult {
  pkg: CompanyPackage;
  files: Record<string, string>;
  warnings: string[];
  secretsDeclared: string[];
  /** the canonical key of each exported skill, by slug */
  skillKeys: Map<string, string>;
}

/** Adapter configuration keys that are runtime state, not configuration (never exported). */
const AGENT_CONFIG_DROPPED = ['instructions', SKILL_SYNC_KEY, 'env', 'instructionsFilePath', 'instructionsBundle'];

/** A unique slug among `taken` (suffix -2, -3, ...). */
function uniqueSlug(base: string, taken: Set<string>): string {
  let slug = base;
  for (let n = 2; taken.has(slug); n++) slug = `${base.slice(0, 60)}-${n}`;
  taken.add(slug);
  return slug;
}

/**
 * Builds the package of a company, reading every domain through its exported service. Never
 * exports secret values, API keys, key hashes, run logs, costs or activity.
 */
@Injectable()
export class PortabilityExportService {
  constructor(
    private readonly companies: CompaniesService,
    private readonly agents: AgentLookup,
    private readonly goals: GoalsService,
    private readonly projects: ProjectsService,
    private readonly labels: LabelsService,
    private readonly budgets: BudgetPoliciesService,
    private readonly secrets: SecretsService,
    private readonly skills: SkillsService,
    private readonly routines: RoutinesService,
    private readonly issues: IssueStore,
    private readonly comments: IssueComments,
    private readonly documents: DocumentsService,
  ) {}

  async build(companyId: string, sel: ExportSelectionDto = {}): Promise<ExportResult> {
    const company = await this.companies.getEntity(companyId);
    const secretList = await this.secrets.list(companyId);
    const scrub = new ExportScrubber(new Map(secretList.map((s) => [s.id, s.name])));
    const warnings = scrub.warnings;

    // agents (terminated ones are gone from the org chart)
    const agentRows = (await this.agents.companyAgents(companyId))
      .filter((a) => a.status !== 'terminated')
      .sort((a, b) => a.urlKey.localeCompare(b.urlKey));
    const slugs: Slugs = { agent: new Map(agentRows.map((a) => [a.id, a.urlKey])), goal: new Map(), project: new Map() };
    const skillRows = sel.includeSkills === false ? [] : await this.skills.listWithFiles(companyId);
    const skillSlugByKey = new Map(skillRows.map((s) => [s.skill.key, s.skill.slug]));
    const agents = sel.includeAgents === false ? [] : agentRows.map((a) => exportAgent(a, scrub, slugs, skillSlugByKey));
    const goals = await this.exportGoals(companyId, slugs);
    const projects = await this.exportProjects(companyId, scrub, slugs);
    const skills = exportSkills(skillRows, warnings);
    const routines = sel.includeRoutines === false ? [] : await this.exportRoutines(companyId, slugs);
    const issues = sel.includeIssues ? await this.exportIssues(companyId, slugs) : [];

    const pkg: CompanyPackage = { company: await this.exportCompany(company, slugs), agents, goals, projects, skills, routines, issues };
    pkg.company.secrets = secretList.filter((s) => scrub.declared.has(s.name)).map((s) => ({ name: s.name, description: s.description }));
    const files = renderPackage(pkg);
    const values: string[] = [];
    for (const s of secretList) {
      try {
        values.push((await this.secrets.resolveValue(companyId, s.id, 'latest')).value);
      } catch {
        // an external provider that cannot resolve here has no value to leak
      }
    }
    redactValues(files, values, warnings);
    const skillKeys = new Map(skillRows.map((s) => [s.skill.slug, s.skill.key]));
    return { pkg, files, warnings, secretsDeclared: pkg.company.secrets.map((s) => s.name), skillKeys };
  }

  /** The company with its labels and budget policies (its secrets are filled in once the package is scrubbed). */
  private async exportCompany(company: CompanyEntity, slugs: Slugs): Promise<PkgCompany> {
    const companyId = company.id;
    const policies = (await this.budgets.overview(companyId)).policies;
    return {
      slug: slugOf(company.name, 'company'),
      name: company.name,
      description: company.description,
      brandColor: company.brandColor,
      budgetMonthlyCents: company.budgetMonthlyCents,
      requireBoardApprovalForNewAgents: company.requireBoardApprovalForNewAgents,
      labels: (await this.labels.list(companyId)).map((l) => ({ name: l.name, color: l.color })),
      budgetPolicies: policies
        .filter((p) => p.scopeType === 'company' || (p.scopeType === 'agent' ? slugs.agent.has(p.scopeId) : slugs.project.has(p.scopeId)))
        // the company and agent monthly budgets travel with their records
        .filter((p) => !(p.scopeType !== 'project' && p.metric === 'billed_cents' && p.windowKind === 'calendar_month_utc'))
        .map((p) => ({
          scopeType: p.scopeType as 'company' | 'agent' | 'project',
          scope: p.scopeType === 'company' ? null : p.scopeType === 'agent' ? slugs.agent.get(p.scopeId)! : slugs.project.get(p.scopeId)!,
          metric: p.metric,
          windowKind: p.windowKind,
          amount: p.amount,
          warnPercent: p.warnPercent,
          hardStopEnabled: p.hardStopEnabled,
          notifyEnabled: p.notifyEnabled,
          isActive: p.isActive,
        })),
      secrets: [],
    };
  }

  /** Goals, each with a unique slug of its title (recorded in `slugs.goal`). */
  private async exportGoals(companyId: string, slugs: Slugs): Promise<PkgGoal[]> {
    const goalRows = await this.goals.list(companyId);
    const taken = new Set<string>();
    for (const g of goalRows) slugs.goal.set(g.id, uniqueSlug(slugOf(g.title, 'goal'), taken));
    return goalRows.map((g) => ({
      path: `goals/${slugs.goal.get(g.id)}/GOAL.md`,
      slug: slugs.goal.get(g.id)!,
      title: g.title,
      description: g.description,
      level: g.level,
      status: g.status,
      parent: g.parentId ? (slugs.goal.get(g.parentId) ?? null) : null,
      owner: g.ownerAgentId ? (slugs.agent.get(g.ownerAgentId) ?? null) : null,
      isCompanyDefault: g.isCompanyDefault,
    }));
  }

  /** Projects with their workspaces (recorded in `slugs.project`). */
  private async exportProjects(companyId: string, scrub: ExportScrubber, slugs: Slugs): Promise<PkgProject[]> {
    const projectRows = (await this.projects.list(companyId)).sort((a, b) => a.urlKey.localeCompare(b.urlKey));
    for (const p of projectRows) slugs.project.set(p.id, p.urlKey);
    return projectRows.map((p) => {
      const path = `projects/${p.urlKey}/PROJECT.md`;
      return {
        path,
        slug: p.urlKey,
        name: p.name,
        description: p.description,
        status: p.status,
        owner: p.leadAgentId ? (slugs.agent.get(p.leadAgentId) ?? null) : null,
        goals: p.goalIds.map((id) => slugs.goal.get(id)).filter((s): s is string => !!s),
        targetDate: p.targetDate,
        color: p.color,
        env: scrub.env(path, 'env', p.env),
        executionWorkspacePolicy: p.executionWorkspacePolicy
          ? (scrub.deep(path, 'executionWorkspacePolicy', p.executionWorkspacePolicy) as Json)
          : null,
        workspaces: [...p.workspaces]
          .sort((x, y) => Number(y.isPrimary) - Number(x.isPrimary) || x.name.localeCompare(y.name))
          .map((w) => ({ name: w.name, isPrimary: w.isPrimary, config: workspaceConfig(scrub, path, w) })),
      };
    });
  }

  /** Routines (recurring tasks); managed routines belong to their owner feature. */
  private async exportRoutines(companyId: string, slugs: Slugs): Promise<PkgRoutine[]> {
    const routines: PkgRoutine[] = [];
    const taken = new Set<string>();
    for (const r of await this.routines.listForCompany(companyId)) {
      if (r.managedBy) continue;
      const slug = uniqueSlug(slugOf(r.title, 'routine'), taken);
      const assignee = slugs.agent.get(r.assigneeAgentId);
      if (!assignee) continue;
      routines.push({
        path: `routines/${slug}/TASK.md`,
        slug,
        title: r.title,
        description: r.description,
        assignee,
        project: r.projectId ? (slugs.project.get(r.projectId) ?? null) : null,
        goal: r.goalId ? (slugs.goal.get(r.goalId) ?? null) : null,
        priority: r.priority,
        status: r.status,
        concurrencyPolicy: r.concurrencyPolicy,
        catchUpPolicy: r.catchUpPolicy,
        triggers: r.triggers.map((t) => ({
          kind: t.kind,
          label: t.label,
          enabled: t.enabled,
          ...(t.cronExpression ? { cronExpression: t.cronExpression } : {}),
          ...(t.timezone ? { timezone: t.timezone } : {}),
        })),
      });
    }
    return routines;
  }

  /** Issues with their documents and comments. */
  private async exportIssues(companyId: string, slugs: Slugs): Promise<PkgIssue[]> {
    const issues: PkgIssue[] = [];
    const rows = await this.issues.allOfCompany(companyId);
    const slugById = new Map(rows.map((r) => [r.id, r.identifier.toLowerCase()]));
    const byIssue = new Map<string, PkgIssue>();
    for (const r of rows) {
      const slug = slugById.get(r.id)!;
      const issue: PkgIssue = {
        path: `tasks/${slug}/TASK.md`,
        slug,
        title: r.title,
        description: r.description,
        status: r.status,
        priority: r.priority,
        assignee: r.assigneeAgentId ? (slugs.agent.get(r.assigneeAgentId) ?? null) : null,
        project: r.projectId ? (slugs.project.get(r.projectId) ?? null) : null,
        goal: r.goalId ? (slugs.goal.get(r.goalId) ?? null) : null,
        parent: r.parentId ? (slugById.get(r.parentId) ?? null) : null,
        labels: r.labelNames,
        comments: [],
        documents: [],
      };
      issues.push(issue);
      byIssue.set(r.id, issue);
    }
    for (const c of await this.comments.allOfCompany(companyId)) {
      byIssue.get(c.issueId)?.comments.push({
        author: c.authorAgentId ? (slugs.agent.get(c.authorAgentId) ?? null) : c.authorUserId ? 'board' : null,
        body: c.body,
      });
    }
    for (const d of await this.documents.latestOfCompany(companyId)) {
      byIssue.get(d.issueId)?.documents.push({ key: d.key, title: d.title, format: d.format, body: d.body });
    }
    return issues;
  }
}

/** Package slugs of the company's records, by id. */
interface Slugs {
  agent: Map<string, string>;
  goal: Map<string, string>;
  project: Map<string, string>;
}

type CompanyEntity = Awaited<ReturnType<CompaniesService['getEntity']>>;
type AgentRecord = Awaited<ReturnType<AgentLookup['companyAgents']>>[number];
type SkillWithFiles = Awaited<ReturnType<SkillsService['listWithFiles']>>[number];
type WorkspaceRecord = Awaited<ReturnType<ProjectsService['list']>>[number]['workspaces'][number];

function exportAgent(a: AgentRecord, scrub: ExportScrubber, slugs: Slugs, skillSlugByKey: Map<string, string>): PkgAgent {
  const path = `agents/${a.urlKey}/AGENTS.md`;
  const cfg = a.adapterConfig ?? {};
  const rest: Json = {};
  for (const [k, v] of Object.entries(cfg)) if (!AGENT_CONFIG_DROPPED.includes(k)) rest[k] = v;
  return {
    path,
    slug: a.urlKey,
    name: a.name,
    role: a.role,
    title: a.title,
    capabilities: a.capabilities,
    reportsTo: a.reportsTo ? (slugs.agent.get(a.reportsTo) ?? null) : null,
    adapterType: a.adapterType,
    adapterConfig: scrub.deep(path, 'adapter.config', rest) as Json,
    env: scrub.env(path, 'env', cfg.env),
    runtimeConfig: scrub.deep(path, 'runtimeConfig', a.runtimeConfig ?? {}) as Json,
    budgetMonthlyCents: a.budgetMonthlyCents,
    skills: desiredSkillsOf(cfg).map((k) => skillSlugByKey.get(k) ?? k),
    instructions: typeof cfg.instructions === 'string' ? cfg.instructions : '',
    metadata: scrub.deep(path, 'metadata', a.metadata ?? {}) as Json,
  };
}

/** A workspace's config as the package carries it (scrubbed; empty fields left out). */
function workspaceConfig(scrub: ExportScrubber, path: string, w: WorkspaceRecord): Json {
  const config = scrub.deep(path, `workspaces.${w.name}`, {
    sourceType: w.sourceType,
    cwd: w.cwd,
    repoUrl: w.repoUrl,
    repoRef: w.repoRef,
    defaultRef: w.defaultRef,
    visibility: w.visibility,
    setupCommand: w.setupCommand,
    cleanupCommand: w.cleanupCommand,
    remoteProvider: w.remoteProvider,
    remoteWorkspaceRef: w.remoteWorkspaceRef,
    sharedWorkspaceKey: w.sharedWorkspaceKey,
    metadata: Object.keys(w.metadata ?? {}).length ? w.metadata : undefined,
    runtimeConfig: w.runtimeConfig ?? undefined,
  }) as Json;
  return Object.fromEntries(Object.entries(config).filter(([, v]) => v !== null && v !== undefined));
}

/** Skills with their text files (bundled skills ship with every company and are not exported). */
function exportSkills(skillRows: SkillWithFiles[], warnings: string[]): PkgSkill[] {
  const skills: PkgSkill[] = [];
  for (const s of skillRows) {
    if (s.skill.bundled) continue;
    const files = s.files.filter((f) => f.content !== null).map((f) => ({ path: f.path, content: f.content! }));
    if (files.length < s.files.length) warnings.push(`skills/${s.skill.slug}: binary files left out (${s.files.length - files.length})`);
    skills.push({ path: `skills/${s.skill.slug}`, slug: s.skill.slug, files });
  }
  return skills;
}
