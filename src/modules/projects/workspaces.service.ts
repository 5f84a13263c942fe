import { Injectable } from '@nestjs/common';
import { notFound } from '../../common/errors/domain-error';
import { isUuid } from '../../common/http/uuid';
import { PathGuard, PathRefusedError } from '../../common/paths/path-guard';
import { AppConfig } from '../../config/app-config';
import { Db } from '../../database/db.service';
import { iso, isoRequired } from '../../database/row-mapping';
import { CreateWorkspaceDto, ProjectRepositoriesDto, UpdateWorkspaceDto, WorkspaceResponseDto } from './dto/workspace.dto';
import { ProjectWorkspaceEntity, RuntimeConfig } from './project-workspace.entity';
import { projectError } from './projects.errors';
import { RuntimeSupervisor } from './runtime-supervisor.service';
import { assertWorkspaceRules, defaultSourceType, defaultWorkspaceName } from './workspace-rules';
import { WorkspacesRepository } from './workspaces.repository';

export function toWorkspaceResponse(w: ProjectWorkspaceEntity): WorkspaceResponseDto {
  const running = w.runtimePid !== null;
  return {
    id: w.id,
    companyId: w.companyId,
    projectId: w.projectId,
    name: w.name,
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
    metadata: w.metadata,
    runtimeConfig: w.runtimeConfig,
    isPrimary: w.isPrimary,
    desiredState: w.desiredState,
    runtimeService: {
      status: running ? 'running' : w.desiredState === 'running' && w.runtimeExitedAt ? 'exited' : 'stopped',
      pid: w.runtimePid,
      ownerInstanceId: w.runtimeOwnerId,
      startedAt: running ? iso(w.runtimeStartedAt) : null,
      exitCode: w.runtimeExitCode,
      exitedAt: iso(w.runtimeExitedAt),
    },
    createdAt: isoRequired(w.createdAt),
    updatedAt: isoRequired(w.updatedAt),
  };
}

/** The project a workspace change runs under, locked by the caller (primacy moves serialise on it). */
export interface LockedProject {
  id: string;
  companyId: string;
}

const SIMPLE_FIELDS = [
  'name',
  'sourceType',
  'cwd',
  'repoUrl',
  'repoRef',
  'defaultRef',
  'visibility',
  'setupCommand',
  'cleanupCommand',
  'remoteProvider',
  'remoteWorkspaceRef',
  'sharedWorkspaceKey',
  'metadata',
] as const;

/**
 * Workspace rules: at least one of cwd or repoUrl (remote_managed: remoteWorkspaceRef or repoUrl),
 * the first workspace is primary, `isPrimary: true` moves primacy, deleting the primary promotes
 * the oldest remaining one. Callers hold the project row lock; the partial unique index
 * `project_workspaces_one_primary` guarantees a single primary.
 */
@Injectable()
export class WorkspacesService {
  private readonly paths: PathGuard;

  constructor(
    private readonly db: Db,
    private readonly repo: WorkspacesRepository,
    private readonly supervisor: RuntimeSupervisor,
    config: AppConfig,
  ) {
    this.paths = new PathGuard(config.pathRoots);
  }

  /**
   * A workspace `cwd` lies under SERVICE_WORKSPACE_ROOTS (after `..` and symbolic links) and outside
   * the service's data and key files: 422 `path_not_allowed` otherwise.
   */
  assertCwdAllowed(cwd: string | null | undefined): void {
    if (!cwd) return;
    try {
      this.paths.assertAllowed(cwd, 'workspace cwd');
    } catch (err) {
      if (err instanceof PathRefusedError) throw projectError('path_not_allowed', err.message, { field: 'cwd', reason: err.reason });
      throw err;
    }
  }

  async listEntities(companyId: string, projectIds: string[]): Promise<ProjectWorkspaceEntity[]> {
    if (!projectIds.length) return [];
    return this.repo.listByProjects(companyId, projectIds);
  }

  async list(companyId: string, projectId: string): Promise<WorkspaceResponseDto[]> {
    return (await this.listEntities(companyId, [projectId])).map(toWorkspaceResponse);
  }

  async getEntity(companyId: string, projectId: string, workspaceId: string, lock = false): Promise<ProjectWorkspaceEntity> {
    if (!isUuid(workspaceId)) throw notFound('Workspace');
    const w = await this.repo.findInProject(companyId, projectId, workspaceId, lock);
    if (!w) throw notFound('Workspace');
    return w;
  }

  async create(project: LockedProject, dto: CreateWorkspaceDto): Promise<WorkspaceResponseDto> {
    const w = this.repo.build({
      companyId: project.companyId,
      projectId: project.id,
      metadata: {},
      runtimeConfig: null,
      desiredState: 'stopped',
      cwd: null,
      repoUrl: null,
      repoRef: null,
      defaultRef: null,
      visibility: null,
      setupCommand: null,
      cleanupCommand: null,
      remoteProvider: null,
      remoteWorkspaceRef: null,
      sharedWorkspaceKey: null,
    });
    this.apply(w, dto);
    w.sourceType = dto.sourceType ?? defaultSourceType(w.cwd, w.repoUrl);
    w.name = dto.name?.trim() || defaultWorkspaceName(w.cwd, w.repoUrl, w.remoteWorkspaceRef);
    assertWorkspaceRules(w);
    this.assertCwdAllowed(w.cwd);
    const count = await this.repo.countInProject(project.companyId, project.id);
    w.isPrimary = count === 0 || dto.isPrimary === true;
    if (w.isPrimary) await this.repo.clearPrimary(project.companyId, project.id);
    const saved = await this.repo.save(w);
    return toWorkspaceResponse(await this.repo.getById(saved.companyId, saved.id));
  }

  async update(project: LockedProject, workspaceId: string, dto: UpdateWorkspaceDto): Promise<WorkspaceResponseDto> {
    const w = await this.getEntity(project.companyId, project.id, workspaceId, true);
    this.apply(w, dto);
    assertWorkspaceRules(w);
    if (dto.cwd !== undefined) this.assertCwdAllowed(w.cwd);
    if (dto.isPrimary === true && !w.isPrimary) {
      await this.repo.clearPrimary(project.companyId, project.id);
      w.isPrimary = true;
    } else if (dto.isPrimary === false && w.isPrimary) {
      // primacy can only move: the oldest other workspace takes it
      const next = await this.repo.oldestOther(project.companyId, project.id, w.id);
      if (!next) throw projectError('primary_required', 'The only workspace of a project stays primary', { field: 'isPrimary' });
      w.isPrimary = false;
      await this.repo.save(w);
      await this.repo.makePrimary(project.companyId, next);
    }
    await this.repo.save(w);
    return toWorkspaceResponse(await this.repo.getById(w.companyId, w.id));
  }

  /** Returns the deleted row; a deleted primary hands primacy to the oldest remaining workspace; its runtime process is stopped. */
  async remove(project: LockedProject, workspaceId: string): Promise<WorkspaceResponseDto> {
    const w = await this.getEntity(project.companyId, project.id, workspaceId, true);
    const before = toWorkspaceResponse(w);
    await this.repo.delete(w.companyId, w.id);
    if (w.isPrimary) {
      const next = await this.repo.oldestOther(project.companyId, project.id, w.id);
      if (next) await this.repo.makePrimary(project.companyId, next);
    }
    this.stopAfterCommit([w.id]);
    return before;
  }

  /** Runtime processes of removed workspaces stop once the removal is committed. */
  stopAfterCommit(workspaceIds: string[]): void {
    for (const id of workspaceIds) this.db.afterCommit(() => this.supervisor.stop(id));
  }

  private apply(w: ProjectWorkspaceEntity, dto: UpdateWorkspaceDto): void {
    for (const key of SIMPLE_FIELDS) {
      const value = dto[key];
      if (value !== undefined)
        (w as unknown as Record<string, unknown>)[key] = typeof value === 'string' && key === 'name' ? value.trim() : value;
    }
    if (dto.runtimeConfig !== undefined) w.runtimeConfig = dto.runtimeConfig ? ({ ...dto.runtimeConfig } as RuntimeConfig) : null;
  }
  /**
   * The repository picker of the project pages: the repositories the company's workspaces name.
   * This service has no GitHub connections of its own, so `connectionCount` is 0.
   */
  async companyRepositories(companyId: string): Promise<ProjectRepositoriesDto> {
    const rows = await this.repo.companyRepositories(companyId);
    const repositories = rows.map((r) => ({
      id: r.id,
      url: r.repoUrl,
      name: (r.repoUrl.replace(/\/+$/, '').split(/[/:]/).pop() ?? r.repoUrl).replace(/\.git$/, ''),
      defaultRef: r.repoRef,
      projectId: r.projectId,
    }));
    return { repositories, connectionCount: 0, failedConnectionCount: 0 };
  }
}
