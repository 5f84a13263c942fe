import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post } from '@nestjs/common';
import { ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { LogActivity } from '../../common/activity/log-activity.decorator';
import type { Actor } from '../../common/auth/actor';
import { Authorize } from '../../common/auth/authorize.decorator';
import { CurrentActor } from '../../common/auth/current-actor.decorator';
import { RouteCompany } from '../../common/auth/route-company.decorator';
import { ApiDomainErrors } from '../../common/errors/api-domain-errors.decorator';
import {
  CatalogListDto,
  ConnectAppDto,
  CreateToolConnectionDto,
  HealthCheckDto,
  ToolApplicationListDto,
  ToolConnectionDto,
  ToolConnectionListDto,
  UpdateToolConnectionDto,
} from './dto/tool-connection.dto';
import { AppsAttentionDto, ConnectionGrantsDto, ConnectionInstallsDto, ToolPolicyListDto } from './dto/tool-access.dto';
import { ToolGalleryDto } from './dto/tool-gallery.dto';
import { ToolAccessService } from './tool-access.service';
import { ToolAppsService } from './tool-apps.service';
import { ToolConnectionsService } from './tool-connections.service';
import { TOOL_ERRORS } from './tools.errors';

/** Activity details of a connection: what it is and where it points, never a secret (references only). */
const connectionDetails = (c: { result: Record<string, unknown> }) => ({
  name: c.result.name,
  transport: c.result.transport,
  toolPrefix: c.result.toolPrefix,
  status: c.result.status,
  credentialSecretIds: ((c.result.credentialRefs as Array<{ secretId: string }> | undefined) ?? []).map((r) => r.secretId),
});

@ApiTags('tools')
@ApiDomainErrors(TOOL_ERRORS)
@Controller()
export class ToolConnectionsController {
  constructor(
    private readonly connections: ToolConnectionsService,
    private readonly apps: ToolAppsService,
    private readonly access: ToolAccessService,
  ) {}

  /** The company's tool connections (archived ones left out), oldest first. */
  @Get('companies/:companyId/tools/connections')
  @Authorize({ callers: ['board'] })
  async list(@Param('companyId') companyId: string): Promise<ToolConnectionListDto> {
    return { connections: await this.connections.list(companyId) };
  }

  /**
   * A remote MCP server (`mcp_remote`: `transportConfig.url`, secret headers in `credentialRefs`
   * with `placement: header`) or a local command (`local_stdio`: `transportConfig.command`, `args`,
   * secret variables with `placement: env`). Credentials are company secrets, named by reference;
   * credential-looking plain headers or variables are refused. A remote URL must be a destination
   * the outbound guard allows. The remote server's tools are listed after the connection is saved.
   */
  @Post('companies/:companyId/tools/connections')
  @HttpCode(201)
  @Authorize({ callers: ['board'] })
  @LogActivity('tool_connection.created', { entityType: 'tool_connection', details: connectionDetails })
  create(
    @CurrentActor() actor: Actor,
    @Param('companyId') companyId: string,
    @Body() dto: CreateToolConnectionDto,
  ): Promise<ToolConnectionDto> {
    return this.connections.create(actor, companyId, dto);
  }

  /** A connection from a gallery preset: the credential values become company secrets, the connection names them. */
  @Post('companies/:companyId/tools/apps/connect')
  @HttpCode(201)
  @Authorize({ callers: ['board'] })
  @LogActivity('tool_connection.created', { entityType: 'tool_connection', details: connectionDetails })
  connect(@CurrentActor() actor: Actor, @Param('companyId') companyId: string, @Body() dto: ConnectAppDto): Promise<ToolConnectionDto> {
    return this.apps.connect(actor, companyId, dto);
  }

  /** The applications connections are grouped under (one per connection unless chosen). */
  @Get('companies/:companyId/tools/applications')
  @Authorize({ callers: ['board'] })
  async applications(@Param('companyId') companyId: string): Promise<ToolApplicationListDto> {
    return { applications: await this.apps.applications(companyId) };
  }

  /** Well-known MCP servers with presets (remote URL and key header, or local command and variables). */
  @Get('companies/:companyId/tools/gallery')
  @Authorize({ callers: ['board'] })
  @ApiOkResponse({ type: ToolGalleryDto })
  gallery(): ToolGalleryDto {
    return this.apps.gallery();
  }

  @Get('tool-connections/:connectionId')
  @Authorize({ callers: ['board'] })
  get(
    @CurrentActor() actor: Actor,
    @RouteCompany() companyId: string | undefined,
    @Param('connectionId') id: string,
  ): Promise<ToolConnectionDto> {
    return this.connections.get(actor, companyId, id);
  }

  /** Partial update; `enabled: false` (or `status: disabled`) takes the connection's tools away from agents. */
  @Patch('tool-connections/:connectionId')
  @Authorize({ callers: ['board'] })
  @LogActivity('tool_connection.updated', {
    entityType: 'tool_connection',
    details: (c) => ({ ...connectionDetails(c), changed: Object.keys(c.body) }),
  })
  update(
    @CurrentActor() actor: Actor,
    @RouteCompany() companyId: string | undefined,
    @Param('connectionId') id: string,
    @Body() dto: UpdateToolConnectionDto,
  ): Promise<ToolConnectionDto> {
    return this.connections.update(actor, companyId, id, dto);
  }

  /** Archives the connection (its records stay); agents no longer reach it. */
  @Delete('tool-connections/:connectionId')
  @Authorize({ callers: ['board'] })
  @LogActivity('tool_connection.archived', { entityType: 'tool_connection', details: connectionDetails })
  archive(
    @CurrentActor() actor: Actor,
    @RouteCompany() companyId: string | undefined,
    @Param('connectionId') id: string,
  ): Promise<ToolConnectionDto> {
    return this.connections.archive(actor, companyId, id);
  }

  /** The tools the remote server listed at the last refresh (`removed`: no longer listed). */
  @Get('tool-connections/:connectionId/catalog')
  @Authorize({ callers: ['board'] })
  catalog(
    @CurrentActor() actor: Actor,
    @RouteCompany() companyId: string | undefined,
    @Param('connectionId') id: string,
  ): Promise<CatalogListDto> {
    return this.connections.catalog(actor, companyId, id);
  }

  /** Lists the remote server's tools now (through the gateway, with the connection's secrets) and keeps them. */
  @Post('tool-connections/:connectionId/catalog/refresh')
  @HttpCode(200)
  @Authorize({ callers: ['board'] })
  @LogActivity('tool_connection.catalog_refreshed', {
    entityType: 'tool_connection',
    details: (c) => ({ status: c.result.status, toolCount: c.result.toolCount }),
    companyId: (c) => (c.result.connection as { companyId?: string } | undefined)?.companyId,
    entityId: (c) => c.params.connectionId,
  })
  refresh(
    @CurrentActor() actor: Actor,
    @RouteCompany() companyId: string | undefined,
    @Param('connectionId') id: string,
  ): Promise<HealthCheckDto> {
    return this.connections.refresh(actor, companyId, id);
  }

  /** Same as a catalog refresh: whether the server answers, and its tools. */
  @Post('tool-connections/:connectionId/health-check')
  @HttpCode(200)
  @Authorize({ callers: ['board'] })
  @LogActivity('tool_connection.health_checked', {
    entityType: 'tool_connection',
    details: (c) => ({ status: c.result.status, toolCount: c.result.toolCount }),
    companyId: (c) => (c.result.connection as { companyId?: string } | undefined)?.companyId,
    entityId: (c) => c.params.connectionId,
  })
  healthCheck(
    @CurrentActor() actor: Actor,
    @RouteCompany() companyId: string | undefined,
    @Param('connectionId') id: string,
  ): Promise<HealthCheckDto> {
    return this.connections.refresh(actor, companyId, id);
  }

  /** Who may use the connection: the bindings of the profiles that allow it. */
  @Get('tool-connections/:connectionId/installs')
  @Authorize({ callers: ['board'] })
  installs(
    @CurrentActor() actor: Actor,
    @RouteCompany() companyId: string | undefined,
    @Param('connectionId') id: string,
  ): Promise<ConnectionInstallsDto> {
    return this.access.installs(actor, companyId, id);
  }

  /** The connection's credential: one company-wide grant naming its secrets (no personal grants). */
  @Get('tool-connections/:connectionId/grants')
  @Authorize({ callers: ['board'] })
  grants(
    @CurrentActor() actor: Actor,
    @RouteCompany() companyId: string | undefined,
    @Param('connectionId') id: string,
  ): Promise<ConnectionGrantsDto> {
    return this.access.grants(actor, companyId, id);
  }

  /** Connections needing the board: a failed check, or calls waiting for approval; with totals. */
  @Get('companies/:companyId/tools/apps/attention')
  @Authorize({ callers: ['board'] })
  attention(@Param('companyId') companyId: string): Promise<AppsAttentionDto> {
    return this.access.attention(companyId);
  }

  /** Per-tool policies live in profiles: always empty. */
  @Get('companies/:companyId/tools/policies')
  @Authorize({ callers: ['board'] })
  policies(): ToolPolicyListDto {
    return { policies: [] };
  }
}
