import { Injectable } from '@nestjs/common';
import type { Actor } from '../../common/auth/actor';
import { CompanyAccessService } from '../../common/auth/company-access.service';
import { notFound } from '../../common/errors/domain-error';
import { isUuid } from '../../common/http/uuid';
import { Db } from '../../database/db.service';
import { iso, isoRequired } from '../../database/row-mapping';
import { CompanyReferences } from '../goals/company-references';
import { CodebaseDto, CreateProjectDto, ProjectGoalSummaryDto, ProjectResponseDto, UpdateProjectDto } from './dto/project.dto';
import { BudgetPoliciesService, ScopeBudget } from '../budgets/budget-policies.service';
import { ProjectTaskCounts } from './project-task-counts.port';
import { PreferencesRepository } from '../preferences/preferences.repository';
import { SecretBindingsService } from '../secrets/secret-bindings.service';
import { assertProjectEnv } from './project-env';
import { ProjectEntity } from './project.entity';
import { ProjectWorkspaceEntity } from './project-workspace.entity';
import { projectError } from './projects.errors';
import { ProjectsRepository } from './projects.repository';
import { PROJECT_PALETTE, toUrlKey } from './url-key';
import { parseWorkspacePayload } from './workspace-rules';
import { toWorkspaceResponse, WorkspacesService } from './workspaces.service';

const MAX_SUFFIX = 1000;

/** The codebase view of the primary workspace (all null, origin `none`, without one). */
export function codebaseOf(w: ProjectWorkspaceEntity | null): CodebaseDto {
  const repoName = w?.repoUrl ? (w.repoUrl.replace(/\/+$/, '').split(/[/:]/).pop() ?? '').replace(/\.git$/, '') || null : null;
  return {
    workspaceId: w?.id ?? null,
    repoUrl: w?.repoUrl ?? null,
    repoRef: w?.repoRef ?? null,
    defaultRef: w?.defaultRef ?? null,
    repoName,
    cwd: w?.cwd ?? null,
    localFolder: w?.cwd ?? null,
    managedFolder: null,
    effectiveLocalFolder: w?.cwd ?? null,
    origin: !w ? 'none' : w.cwd ? 'local_folder' : 'repository',
  };
}

/**
 * Projects: a company-unique shortname (urlKey) derived from the name, linked goals (`goalIds`,
 * with the legacy `goalId` kept equal to the first), and the workspace view (`workspaces`,
 * `primaryWorkspace`, `codebase` derived from the primary workspace).
 */
@Injectable()
export class ProjectsService {
  constructor(
    private readonly db: Db,
    private readonly repo: ProjectsRepository,
    private readonly access: CompanyAccessService,
    private readonly workspaces: WorkspacesService,
    private readonly secretBindings: SecretBindingsService,
    private readonly memberships: PreferencesRepository,
    private readonly refs: CompanyReferences,
    private readonly taskCounts: ProjectTaskCounts,
    private readonly budgets: BudgetPoliciesService,
  ) {}

  /** Shape check, then secret references resolved against the company and normalised before storage. */
  private async normalizeEnv(companyId: string, env: Record<string, unknown>): Promise<Record<string, unknown>> {
    return this.secretBindings.validateEnvBindings(companyId, assertProjectEnv(env), { field: 'env' });
  }

  async list(companyId: string): Promise<ProjectResponseDto[]> {
    return this.toResponses(await this.repo.listByCompany(companyId));
  }

  /**
   * `{projectId}` is a UUID or a shortname. A shortname is looked up in `?companyId=`, else in an
   * agent caller's company, else across the companies the caller can access: more than one match
   * is ambiguous (409). A UUID is looked up in the route's company (`routeCompanyId`: resolved and
   * checked by the guard; undefined when it knows no such project). With `lock` the row is locked
   * for the rest of the transaction.
   */
  async resolve(actor: Actor, routeCompanyId: string | undefined, ref: string, companyId?: string, lock = false): Promise<ProjectEntity> {
    let project: ProjectEntity | null;
    if (isUuid(ref)) {
      project = routeCompanyId ? await this.repo.findInCompany(routeCompanyId, ref) : null;
      if (!project) throw notFound('Project');
    } else {
      project = await this.findByShortname(actor, toUrlKey(ref), companyId ?? (actor.kind === 'agent' ? actor.companyId : undefined));
    }
    if (!lock) return project;
    const locked = await this.repo.lock(project.companyId, project.id);
    if (!locked) throw notFound('Project');
    return locked;
  }

  private async findByShortname(actor: Actor, urlKey: string, companyId: string | undefined): Promise<ProjectEntity> {
    if (companyId !== undefined) {
      await this.access.assertCompanyAccess(actor, companyId);
      const p = await this.repo.findByUrlKey(companyId, urlKey);
      if (!p) throw notFound('Project');
      return p;
    }
    const ids = await this.access.accessibleCompanyIds(actor);
    const rows = await this.repo.findByUrlKeyIn(urlKey, ids);
    if (!rows.length) throw notFound('Project');
    if (rows.length > 1) {
      throw projectError(
        'ambiguous_project_shortname',
        `Shortname "${urlKey}" matches projects of several companies; pass ?companyId= or use the id`,
      );
    }
    return rows[0];
  }

  async get(actor: Actor, routeCompanyId: string | undefined, ref: string, companyId?: string): Promise<ProjectResponseDto> {
    return (await this.toResponses([await this.resolve(actor, routeCompanyId, ref, companyId)]))[0];
  }

  /** A taken shortname gets a numeric suffix (`api`, `api-2`, …); `workspace` seeds the first workspace (422 rolls everything back). */
  /** `actor`: who asks (binding secrets in `env` needs the board or agents:create); internal callers may omit it. */
  async create(companyId: string, dto: CreateProjectDto, actor?: Actor): Promise<ProjectResponseDto> {
    const workspace = dto.workspace !== undefined ? await parseWorkspacePayload(dto.workspace) : undefined;
    const goalIds = await this.requestedGoals(companyId, dto);
    if (dto.leadAgentId) await this.refs.assertAgentOfCompany(companyId, dto.leadAgentId, 'leadAgentId');
    const color = dto.color ?? (await this.paletteColor(companyId));
    const env = await this.normalizeEnv(companyId, dto.env ?? {});
    if (actor) await this.secretBindings.assertMayBind(actor, companyId, { before: {}, after: env, field: 'env' });
    const base = toUrlKey(dto.name);
    let id: string | undefined;
    for (let n = 1; !id && n <= MAX_SUFFIX; n++) {
      const urlKey = n === 1 ? base : `${base.slice(0, 60)}-${n}`;
      id = await this.repo.insert(companyId, {
        name: dto.name.trim(),
        urlKey,
        description: dto.description ?? null,
        status: dto.status ?? 'backlog',
        leadAgentId: dto.leadAgentId ?? null,
        targetDate: dto.targetDate ?? null,
        color: color.toLowerCase(),
        env,
        executionWorkspacePolicy: dto.executionWorkspacePolicy ?? null,
        archivedAt: dto.archivedAt ?? null,
      });
    }
    if (!id) throw projectError('project_shortname_conflict', 'No free shortname for this project name');
    await this.repo.setGoals(companyId, id, goalIds ?? []);
    if (workspace) await this.workspaces.create({ id, companyId }, workspace);
    return (await this.toResponses([await this.repo.getById(companyId, id)]))[0];
  }

  async update(actor: Actor, routeCompanyId: string | undefined, ref: string, dto: UpdateProjectDto): Promise<ProjectResponseDto> {
    const project = await this.resolve(actor, routeCompanyId, ref, undefined, true);
    if (dto.name !== undefined) {
      const urlKey = toUrlKey(dto.name);
      if (urlKey !== project.urlKey) {
        if (await this.repo.urlKeyTaken(project.companyId, urlKey, project.id))
          throw projectError('project_shortname_conflict', `Another project of this company already has the shortname "${urlKey}"`, {
            urlKey,
          });
      }
      project.name = dto.name.trim();
      project.urlKey = urlKey;
    }
    if (dto.leadAgentId !== undefined && dto.leadAgentId !== project.leadAgentId) {
      if (dto.leadAgentId !== null) await this.refs.assertAgentOfCompany(project.companyId, dto.leadAgentId, 'leadAgentId');
      project.leadAgentId = dto.leadAgentId;
    }
    if (dto.description !== undefined) project.description = dto.description;
    if (dto.status !== undefined) project.status = dto.status;
    if (dto.targetDate !== undefined) project.targetDate = dto.targetDate;
    if (dto.color !== undefined) project.color = dto.color ? dto.color.toLowerCase() : await this.paletteColor(project.companyId);
    // null clears the variables
    if (dto.env !== undefined) {
      const env = await this.normalizeEnv(project.companyId, dto.env ?? {});
      // the agents running in this project get these bindings: adding one needs the board or agents:create
      await this.secretBindings.assertMayBind(actor, project.companyId, { before: project.env, after: env, field: 'env' });
      project.env = env;
    }
    if (dto.executionWorkspacePolicy !== undefined) project.executionWorkspacePolicy = dto.executionWorkspacePolicy;
    if (dto.archivedAt !== undefined) project.archivedAt = dto.archivedAt === null ? null : new Date(dto.archivedAt);
    const goalIds = await this.requestedGoals(project.companyId, dto);
    await this.repo.save(project);
    if (goalIds) await this.repo.setGoals(project.companyId, project.id, goalIds);
    return (await this.toResponses([await this.repo.getById(project.companyId, project.id)]))[0];
  }

  /** Returns the deleted row; workspaces go with it and their runtime processes are stopped. */
  async remove(actor: Actor, routeCompanyId: string | undefined, ref: string): Promise<ProjectResponseDto> {
    const project = await this.resolve(actor, routeCompanyId, ref, undefined, true);
    const [before] = await this.toResponses([project]);
    await this.memberships.deleteMembershipsOfProject(project.id);
    await this.repo.delete(project.companyId, project.id);
    this.workspaces.stopAfterCommit(before.workspaces.map((w) => w.id));
    return before;
  }

  /** `goalIds` wins; the legacy `goalId` alone means exactly that goal (null: none); neither: unchanged. */
  private async requestedGoals(companyId: string, dto: UpdateProjectDto): Promise<string[] | undefined> {
    if (dto.goalIds !== undefined) return this.refs.assertGoalsOfCompany(companyId, dto.goalIds, 'goalIds');
    if (dto.goalId !== undefined) return this.refs.assertGoalsOfCompany(companyId, dto.goalId ? [dto.goalId] : [], 'goalId');
    return undefined;
  }

  private async paletteColor(companyId: string): Promise<string> {
    const count = await this.repo.countByCompany(companyId);
    return PROJECT_PALETTE[count % PROJECT_PALETTE.length];
  }

  async toResponses(projects: ProjectEntity[]): Promise<ProjectResponseDto[]> {
    const ids = projects.map((p) => p.id);
    if (!ids.length) return [];
    const goalRows: Awaited<ReturnType<ProjectsRepository['goalSummaries']>> = [];
    for (const companyId of new Set(projects.map((p) => p.companyId))) {
      const own = projects.filter((p) => p.companyId === companyId).map((p) => p.id);
      goalRows.push(...(await this.repo.goalSummaries(companyId, own)));
    }
    const workspaces: ProjectWorkspaceEntity[] = [];
    for (const companyId of new Set(projects.map((p) => p.companyId))) {
      workspaces.push(
        ...(await this.workspaces.listEntities(
          companyId,
          projects.filter((p) => p.companyId === companyId).map((p) => p.id),
        )),
      );
    }
    const counts = new Map<string, number>();
    const budgets = new Map<string, ScopeBudget>();
    for (const companyId of new Set(projects.map((p) => p.companyId))) {
      const own = projects.filter((p) => p.companyId === companyId).map((p) => p.id);
      for (const [id, n] of await this.taskCounts.of(companyId, own)) counts.set(id, n);
      for (const [id, b] of await this.budgets.budgetsOf(companyId, 'project', own)) budgets.set(id, b);
    }
    return projects.map((p) => {
      const goals = goalRows.filter((g) => g.projectId === p.id).map(({ id, title, level, status }) => ({ id, title, level, status }));
      const own = workspaces.filter((w) => w.projectId === p.id);
      const primary = own.find((w) => w.isPrimary) ?? null;
      return this.toResponse(p, goals, own, primary, { taskCount: counts.get(p.id) ?? 0, budget: budgets.get(p.id) ?? null });
    });
  }

  /** One project of the company as its page shows it, or null when the company has no such project. */
  async view(companyId: string, projectId: string): Promise<ProjectResponseDto | null> {
    const p = await this.repo.findInCompany(companyId, projectId);
    if (!p) return null;
    return (await this.toResponses([p]))[0];
  }

  private toResponse(
    p: ProjectEntity,
    goals: ProjectGoalSummaryDto[],
    own: ProjectWorkspaceEntity[],
    primary: ProjectWorkspaceEntity | null,
    extra: { taskCount: number; budget: ScopeBudget | null },
  ): ProjectResponseDto {
    return {
      id: p.id,
      companyId: p.companyId,
      name: p.name,
      urlKey: p.urlKey,
      description: p.description,
      status: p.status,
      goalId: goals[0]?.id ?? p.goalId,
      goalIds: goals.map((g) => g.id),
      goals,
      leadAgentId: p.leadAgentId,
      targetDate: p.targetDate,
      color: p.color,
      icon: null,
      env: p.env,
      executionWorkspacePolicy: p.executionWorkspacePolicy,
      archivedAt: iso(p.archivedAt),
      pausedAt: iso(p.pausedAt),
      pauseReason: p.pauseReason,
      codebase: codebaseOf(primary),
      workspaces: own.map(toWorkspaceResponse),
      primaryWorkspace: primary ? toWorkspaceResponse(primary) : null,
      taskCount: extra.taskCount,
      budget: extra.budget,
      managedByPlugin: null,
      createdAt: isoRequired(p.createdAt),
      updatedAt: isoRequired(p.updatedAt),
    };
  }
}
