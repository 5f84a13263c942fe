import { ApiDomainErrors } from '../../common/errors/api-domain-errors.decorator';
import { PROJECT_ERRORS } from './projects.errors';
import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { LogActivity } from '../../common/activity/log-activity.decorator';
import type { Actor } from '../../common/auth/actor';
import { Authorize } from '../../common/auth/authorize.decorator';
import { CurrentActor } from '../../common/auth/current-actor.decorator';
import { RouteCompany } from '../../common/auth/route-company.decorator';
import { CreateProjectDto, GetProjectQueryDto, ProjectResponseDto, UpdateProjectDto } from './dto/project.dto';
import { ProjectsService } from './projects.service';
import { WorkspacesService } from './workspaces.service';
import { ProjectRepositoriesDto } from './dto/workspace.dto';

@ApiTags('projects')
@ApiDomainErrors(PROJECT_ERRORS)
@Controller()
export class ProjectsController {
  constructor(
    private readonly projects: ProjectsService,
    private readonly workspaces: WorkspacesService,
  ) {}

  /**
   * The repositories the company's project workspaces name (the project pages' repository picker),
   * one per URL. This service holds no GitHub connections, so `connectionCount` is 0.
   */
  @Get('companies/:companyId/project-repositories')
  @Authorize({ callers: ['board', 'agent'] })
  repositories(@Param('companyId') companyId: string): Promise<ProjectRepositoriesDto> {
    return this.workspaces.companyRepositories(companyId);
  }

  /** All projects of the company with goals and workspaces. */
  @Get('companies/:companyId/projects')
  @Authorize({ callers: ['board', 'agent'] })
  list(@Param('companyId') companyId: string): Promise<ProjectResponseDto[]> {
    return this.projects.list(companyId);
  }

  /** Status defaults to `backlog`, colour to the palette; `workspace` seeds the first workspace (invalid: 422, nothing created). */
  @Post('companies/:companyId/projects')
  @HttpCode(201)
  @Authorize({ callers: ['board', 'agent'] })
  @LogActivity('project.created', { entityType: 'project' })
  create(@CurrentActor() actor: Actor, @Param('companyId') companyId: string, @Body() dto: CreateProjectDto): Promise<ProjectResponseDto> {
    return this.projects.create(companyId, dto, actor);
  }

  /** By UUID or shortname (`?companyId=` narrows a shortname to one company); an ambiguous shortname is 409. */
  @Get('projects/:projectId')
  @Authorize({ callers: ['board', 'agent'] })
  get(
    @CurrentActor() actor: Actor,
    @RouteCompany() routeCompanyId: string | undefined,
    @Param('projectId') projectId: string,
    @Query() q: GetProjectQueryDto,
  ): Promise<ProjectResponseDto> {
    return this.projects.get(actor, routeCompanyId, projectId, q.companyId);
  }

  /** Partial update; `goalIds` preferred over the legacy `goalId`; a rename onto another project's shortname is 409. */
  @Patch('projects/:projectId')
  @Authorize({ callers: ['board', 'agent'] })
  @LogActivity('project.updated', { entityType: 'project' })
  update(
    @CurrentActor() actor: Actor,
    @RouteCompany() routeCompanyId: string | undefined,
    @Param('projectId') projectId: string,
    @Body() dto: UpdateProjectDto,
  ): Promise<ProjectResponseDto> {
    return this.projects.update(actor, routeCompanyId, projectId, dto);
  }

  /** Returns the deleted row; its workspaces (and their runtime services) go with it. */
  @Delete('projects/:projectId')
  @Authorize({ callers: ['board', 'agent'] })
  @LogActivity('project.deleted', { entityType: 'project', details: (c) => ({ name: c.result.name, urlKey: c.result.urlKey }) })
  remove(
    @CurrentActor() actor: Actor,
    @RouteCompany() routeCompanyId: string | undefined,
    @Param('projectId') projectId: string,
  ): Promise<ProjectResponseDto> {
    return this.projects.remove(actor, routeCompanyId, projectId);
  }
}
