import { Injectable } from '@nestjs/common';
import type { Actor } from '../../common/auth/actor';
import { CompanyAccessService } from '../../common/auth/company-access.service';
import { conflict, notFound } from '../../common/errors/domain-error';
import { isUuid } from '../../common/http/uuid';
import { Db } from '../../database/db.service';
import { assertAgentOfCompany, assertGoalsOfCompany } from '../goals/company-references';
import { CreateProjectDto, ProjectGoalSummaryDto, ProjectResponseDto, UpdateProjectDto } from './dto/project.dto';
import { SecretBindingsService } from '../secrets/secret-bindings.service';
import { assertProjectEnv } from './project-env';
import { ProjectEntity } from './project.entity';
import { ProjectWorkspaceEntity } from './project-workspace.entity';
import { PROJECT_PALETTE, toUrlKey } from './url-key';
import { parseWorkspacePayload } from './workspace-rules';
import { toWorkspaceResponse, WorkspacesService } from './workspaces.service';

const MAX_SUFFIX = 1000;

/**
 * Projects: a company-unique shortname (urlKey) derived from the name, linked goals (`goalIds`,
 * with the legacy `goalId` kept equal to the first), and the workspace view (`workspaces`,
 * `primaryWorkspace`, `codebase` derived from the primary workspace).
 */
@Injectable()
export class ProjectsService {
  constructor(
    private readonly db: Db,
    private readonly access: CompanyAccessService,
    private readonly workspaces: WorkspacesService,
    private readonly secretBindings: SecretBindingsService,
  ) {}

  /** Shape check, then secret references resolved against the company and normalised before storage. */
  private async normalizeEnv(companyId: string, env: Record<string, unknown>): Promise<Record<string, unknown>> {
    return this.secretBindings.validateEnvBindings(companyId, assertProjectEnv(env), { field: 'env' });
  }

  private get repo() {
    return this.db.repo(ProjectEntity);
  }

  async list(companyId: string): Promise<ProjectResponseDto[]> {
    const rows = await this.repo.find({ where: { companyId }, order: { createdAt: 'ASC', id: 'ASC' } });
    return this.toResponses(rows);
  }

  /**
   * `{projectId}` is a UUID or a shortname. A shortname is looked up in `?companyId=`, else in an
   * agent caller's company, else across the companies the caller can access: more than one match
   * is ambiguous (409). With `lock` the row is locked for the rest of the transaction.
   */
  async resolve(actor: Actor, ref: string, companyId?: string, lock = false): Promise<ProjectEntity> {
    let project: ProjectEntity | null;
    if (isUuid(ref)) {
      project = await this.repo.findOne({ where: { id: ref } });
      if (!project) throw notFound('Project');
      await this.access.assertAccessToKnownCompany(actor, project.companyId);
    } else {
      project = await this.findByShortname(actor, toUrlKey(ref), companyId ?? (actor.kind === 'agent' ? actor.companyId : undefined));
    }
    if (!lock) return project;
    const locked = await this.repo.createQueryBuilder('p').setLock('pessimistic_write').where('p.id = :id', { id: project.id }).getOne();
    if (!locked) throw notFound('Project');
    return locked;
  }

  private async findByShortname(actor: Actor, urlKey: string, companyId: string | undefined): Promise<ProjectEntity> {
    if (companyId !== undefined) {
      await this.access.assertCompanyAccess(actor, companyId);
      const p = await this.repo.findOne({ where: { companyId, urlKey } });
      if (!p) throw notFound('Project');
      return p;
    }
    const ids = await this.access.accessibleCompanyIds(actor);
    const qb = this.repo.createQueryBuilder('p').where('p.url_key = :urlKey', { urlKey }).limit(2);
    if (ids) qb.andWhere('p.company_id = ANY(:ids)', { ids });
    const rows = await qb.getMany();
    if (!rows.length) throw notFound('Project');
    if (rows.length > 1) {
      throw conflict(
        `Shortname "${urlKey}" matches projects of several companies; pass ?companyId= or use the id`,
        'ambiguous_project_shortname',
      );
    }
    return rows[0];
  }

  async get(actor: Actor, ref: string, companyId?: string): Promise<ProjectResponseDto> {
    return (await this.toResponses([await this.resolve(actor, ref, companyId)]))[0];
  }

  /** A taken shortname gets a numeric suffix (`api`, `api-2`, …); `workspace` seeds the first workspace (422 rolls everything back). */
  async create(companyId: string, dto: CreateProjectDto): Promise<ProjectResponseDto> {
    const workspace = dto.workspace !== undefined ? await parseWorkspacePayload(dto.workspace) : undefined;
    const goalIds = await this.requestedGoals(companyId, dto);
    if (dto.leadAgentId) await assertAgentOfCompany(this.db, companyId, dto.leadAgentId, 'leadAgentId');
    const color = dto.color ?? (await this.paletteColor(companyId));
    const env = await this.normalizeEnv(companyId, dto.env ?? {});
    const base = toUrlKey(dto.name);
    let id: string | undefined;
    for (let n = 1; !id && n <= MAX_SUFFIX; n++) {
      const urlKey = n === 1 ? base : `${base.slice(0, 60)}-${n}`;
      const rows = await this.db.query<{ id: string }>(
        `INSERT INTO projects (company_id, name, url_key, description, status, lead_agent_id, target_date, color, env, execution_workspace_policy, archived_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
         ON CONFLICT (company_id, url_key) DO NOTHING RETURNING id`,
        [
          companyId,
          dto.name.trim(),
          urlKey,
          dto.description ?? null,
          dto.status ?? 'backlog',
          dto.leadAgentId ?? null,
          dto.targetDate ?? null,
          color.toLowerCase(),
          JSON.stringify(env),
          dto.executionWorkspacePolicy ? JSON.stringify(dto.executionWorkspacePolicy) : null,
          dto.archivedAt ?? null,
        ],
      );
      id = rows[0]?.id;
    }
    if (!id) throw conflict('No free shortname for this project name', 'project_shortname_conflict');
    await this.linkGoals(id, goalIds ?? []);
    if (workspace) await this.workspaces.create({ id, companyId }, workspace);
    return (await this.toResponses([await this.repo.findOneByOrFail({ id })]))[0];
  }

  async update(actor: Actor, ref: string, dto: UpdateProjectDto): Promise<ProjectResponseDto> {
    const project = await this.resolve(actor, ref, undefined, true);
    if (dto.name !== undefined) {
      const urlKey = toUrlKey(dto.name);
      if (urlKey !== project.urlKey) {
        const taken = await this.db.query(`SELECT 1 FROM projects WHERE company_id = $1 AND url_key = $2 AND id <> $3`, [
          project.companyId,
          urlKey,
          project.id,
        ]);
        if (taken.length)
          throw conflict(`Another project of this company already has the shortname "${urlKey}"`, 'project_shortname_conflict', { urlKey });
      }
      project.name = dto.name.trim();
      project.urlKey = urlKey;
    }
    if (dto.leadAgentId !== undefined && dto.leadAgentId !== project.leadAgentId) {
      if (dto.leadAgentId !== null) await assertAgentOfCompany(this.db, project.companyId, dto.leadAgentId, 'leadAgentId');
      project.leadAgentId = dto.leadAgentId;
    }
    if (dto.description !== undefined) project.description = dto.description;
    if (dto.status !== undefined) project.status = dto.status;
    if (dto.targetDate !== undefined) project.targetDate = dto.targetDate;
    if (dto.color !== undefined) project.color = dto.color ? dto.color.toLowerCase() : await this.paletteColor(project.companyId);
    // null clears the variables
    if (dto.env !== undefined) project.env = await this.normalizeEnv(project.companyId, dto.env ?? {});
    if (dto.executionWorkspacePolicy !== undefined) project.executionWorkspacePolicy = dto.executionWorkspacePolicy;
    if (dto.archivedAt !== undefined) project.archivedAt = dto.archivedAt === null ? null : new Date(dto.archivedAt);
    const goalIds = await this.requestedGoals(project.companyId, dto);
    await this.repo.save(project);
    if (goalIds) await this.linkGoals(project.id, goalIds);
    return (await this.toResponses([await this.repo.findOneByOrFail({ id: project.id })]))[0];
  }

  /** Returns the deleted row; workspaces go with it and their runtime processes are stopped. */
  async remove(actor: Actor, ref: string): Promise<ProjectResponseDto> {
    const project = await this.resolve(actor, ref, undefined, true);
    const [before] = await this.toResponses([project]);
    await this.db.query(`DELETE FROM resource_memberships WHERE resource_type = 'project' AND resource_id = $1`, [project.id]);
    await this.repo.delete({ id: project.id });
    this.workspaces.stopAfterCommit(before.workspaces.map((w) => w.id));
    return before;
  }

  /** `goalIds` wins; the legacy `goalId` alone means exactly that goal (null: none); neither: unchanged. */
  private async requestedGoals(companyId: string, dto: UpdateProjectDto): Promise<string[] | undefined> {
    if (dto.goalIds !== undefined) return assertGoalsOfCompany(this.db, companyId, dto.goalIds, 'goalIds');
    if (dto.goalId !== undefined) return assertGoalsOfCompany(this.db, companyId, dto.goalId ? [dto.goalId] : [], 'goalId');
    return undefined;
  }

  private async linkGoals(projectId: string, goalIds: string[]): Promise<void> {
    await this.db.query(`DELETE FROM project_goals WHERE project_id = $1`, [projectId]);
    if (goalIds.length) {
      await this.db.query(
        `INSERT INTO project_goals (project_id, goal_id, position) SELECT $1, g, p::int - 1 FROM unnest($2::uuid[]) WITH ORDINALITY AS t(g, p)`,
        [projectId, goalIds],
      );
    }
    await this.db.query(`UPDATE projects SET goal_id = $2, updated_at = now() WHERE id = $1`, [projectId, goalIds[0] ?? null]);
  }

  private async paletteColor(companyId: string): Promise<string> {
    const [{ count }] = await this.db.query<{ count: number }>(`SELECT count(*)::int AS count FROM projects WHERE company_id = $1`, [
      companyId,
    ]);
    return PROJECT_PALETTE[count % PROJECT_PALETTE.length];
  }

  async toResponses(projects: ProjectEntity[]): Promise<ProjectResponseDto[]> {
    const ids = projects.map((p) => p.id);
    if (!ids.length) return [];
    const goalRows = await this.db.query<ProjectGoalSummaryDto & { project_id: string }>(
      `SELECT pg.project_id, g.id, g.title, g.level, g.status
         FROM project_goals pg JOIN goals g ON g.id = pg.goal_id
        WHERE pg.project_id = ANY($1::uuid[]) ORDER BY pg.position, g.id`,
      [ids],
    );
    const workspaces = await this.workspaces.listEntities(ids);
    return projects.map((p) => {
      const goals = goalRows.filter((g) => g.project_id === p.id).map(({ id, title, level, status }) => ({ id, title, level, status }));
      const own = workspaces.filter((w) => w.projectId === p.id);
      const primary = own.find((w) => w.isPrimary) ?? null;
      return this.toResponse(p, goals, own, primary);
    });
  }

  private toResponse(
    p: ProjectEntity,
    goals: ProjectGoalSummaryDto[],
    own: ProjectWorkspaceEntity[],
    primary: ProjectWorkspaceEntity | null,
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
      env: p.env,
      executionWorkspacePolicy: p.executionWorkspacePolicy,
      archivedAt: p.archivedAt ? p.archivedAt.toISOString() : null,
      pausedAt: p.pausedAt ? p.pausedAt.toISOString() : null,
      pauseReason: p.pauseReason,
      codebase: primary ? { repoUrl: primary.repoUrl, repoRef: primary.repoRef, cwd: primary.cwd } : null,
      workspaces: own.map(toWorkspaceResponse),
      primaryWorkspace: primary ? toWorkspaceResponse(primary) : null,
      createdAt: p.createdAt.toISOString(),
      updatedAt: p.updatedAt.toISOString(),
    };
  }
}
