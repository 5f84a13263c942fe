import { ApiDomainErrors } from '../../common/errors/api-domain-errors.decorator';
import { PROJECT_ERRORS } from './projects.errors';
import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { ActivityContext, LogActivity } from '../../common/activity/log-activity.decorator';
import type { Actor } from '../../common/auth/actor';
import { Authorize } from '../../common/auth/authorize.decorator';
import { CurrentActor } from '../../common/auth/current-actor.decorator';
import { RouteCompany } from '../../common/auth/route-company.decorator';
import { CreateWorkspaceDto, RuntimeServiceResultDto, UpdateWorkspaceDto, WorkspaceResponseDto } from './dto/workspace.dto';
import { ProjectsService } from './projects.service';
import { RuntimeAction } from './runtime-service-operation.entity';
import { RuntimeServicesService } from './runtime-services.service';
import { WorkspacesService } from './workspaces.service';

const workspaceActivity = { entityType: 'project_workspace' } as const;
const runtimeWorkspace = (c: ActivityContext) => c.result.workspace as { id: string; companyId: string } | undefined;

@ApiTags('projects')
@ApiDomainErrors(PROJECT_ERRORS)
@Controller('projects/:projectId/workspaces')
export class WorkspacesController {
  constructor(
    private readonly projects: ProjectsService,
    private readonly workspaces: WorkspacesService,
    private readonly runtime: RuntimeServicesService,
  ) {}

  /** The project's workspaces, oldest first. */
  @Get()
  @Authorize({ callers: ['board', 'agent'] })
  async list(
    @CurrentActor() actor: Actor,
    @RouteCompany() routeCompanyId: string | undefined,
    @Param('projectId') projectId: string,
  ): Promise<WorkspaceResponseDto[]> {
    const project = await this.projects.resolve(actor, routeCompanyId, projectId);
    return this.workspaces.list(project.companyId, project.id);
  }

  /** At least one of cwd or repoUrl (remote_managed: remoteWorkspaceRef or repoUrl); the first workspace is primary. */
  @Post()
  @HttpCode(201)
  @Authorize({ callers: ['board', 'agent'] })
  @LogActivity('project_workspace.created', workspaceActivity)
  async create(
    @CurrentActor() actor: Actor,
    @RouteCompany() routeCompanyId: string | undefined,
    @Param('projectId') projectId: string,
    @Body() dto: CreateWorkspaceDto,
  ): Promise<WorkspaceResponseDto> {
    const project = await this.projects.resolve(actor, routeCompanyId, projectId, undefined, true);
    return this.workspaces.create(project, dto);
  }

  /** Partial update; `isPrimary: true` moves primacy here, `false` hands it to the oldest other workspace. */
  @Patch(':workspaceId')
  @Authorize({ callers: ['board', 'agent'] })
  @LogActivity('project_workspace.updated', workspaceActivity)
  async update(
    @CurrentActor() actor: Actor,
    @RouteCompany() routeCompanyId: string | undefined,
    @Param('projectId') projectId: string,
    @Param('workspaceId') workspaceId: string,
    @Body() dto: UpdateWorkspaceDto,
  ): Promise<WorkspaceResponseDto> {
    const project = await this.projects.resolve(actor, routeCompanyId, projectId, undefined, true);
    return this.workspaces.update(project, workspaceId, dto);
  }

  /** Returns the deleted row; a deleted primary promotes the oldest remaining workspace; its runtime service stops. */
  @Delete(':workspaceId')
  @Authorize({ callers: ['board', 'agent'] })
  @LogActivity('project_workspace.deleted', {
    ...workspaceActivity,
    details: (c) => ({ name: c.result.name, projectId: c.result.projectId }),
  })
  async remove(
    @CurrentActor() actor: Actor,
    @RouteCompany() routeCompanyId: string | undefined,
    @Param('projectId') projectId: string,
    @Param('workspaceId') workspaceId: string,
  ): Promise<WorkspaceResponseDto> {
    const project = await this.projects.resolve(actor, routeCompanyId, projectId, undefined, true);
    return this.workspaces.remove(project, workspaceId);
  }

  /**
   * `start` | `stop` | `restart` the workspace's runtime service (runtimeConfig command in cwd); no body.
   * start and restart need cwd and runtimeConfig (422). Returns the workspace and the operation record.
   */
  @Post(':workspaceId/runtime-services/:action')
  @HttpCode(200)
  @Authorize({ callers: ['board'] })
  @LogActivity((c) => `project_workspace.runtime_${c.params.action}`, {
    ...workspaceActivity,
    entityId: (c) => runtimeWorkspace(c)?.id,
    companyId: (c) => runtimeWorkspace(c)?.companyId,
    details: (c) => {
      const op = c.result.operation as Record<string, unknown> | undefined;
      return op ? { operationId: op.id, status: op.status, pid: op.pid, error: op.error } : {};
    },
  })
  async runtimeService(
    @CurrentActor() actor: Actor,
    @RouteCompany() routeCompanyId: string | undefined,
    @Param('projectId') projectId: string,
    @Param('workspaceId') workspaceId: string,
    @Param('action') action: string,
  ): Promise<RuntimeServiceResultDto> {
    const project = await this.projects.resolve(actor, routeCompanyId, projectId);
    return this.runtime.perform(actor, project, workspaceId, action as RuntimeAction);
  }
}
