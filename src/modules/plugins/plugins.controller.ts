import { ApiDomainErrors } from '../../common/errors/api-domain-errors.decorator';
import { PLUGIN_ERRORS } from './plugins.errors';
import { InstanceAudit, NoActivity } from '../../common/activity/log-activity.decorator';
import { Body, Controller, Delete, Get, Headers, HttpCode, Param, Post, Put, Query, Req, Res } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Actor } from '../../common/auth/actor';
import { Authorize, Public } from '../../common/auth/authorize.decorator';
import { CurrentActor } from '../../common/auth/current-actor.decorator';
import { assertInstanceAdmin } from '../../common/auth/instance-admin';
import {
  BridgeCallDto,
  ExecuteToolDto,
  InstallPluginDto,
  LocalFolderDto,
  PluginCallDto,
  PluginConfigDto,
  PluginUiContributionDto,
  RecentQueryDto,
  TestPluginConfigDto,
  UpgradePluginDto,
} from './dto/plugin.dto';
import { PluginSupervisor } from './plugin-supervisor.service';
import { PluginCallsService } from './plugin-calls.service';
import { PluginConfigService } from './plugin-config.service';
import { PluginFoldersService } from './plugin-folders.service';
import { PluginsService } from './plugins.service';

/**
 * Plugins (alpha runtime, protocol version 1; see README "Plugins"). Administration needs an
 * instance admin (agents get 403); company-scoped paths check company access.
 */
@ApiTags('plugins')
@ApiDomainErrors(PLUGIN_ERRORS)
@Controller('plugins')
export class PluginsController {
  constructor(
    private readonly plugins: PluginsService,
    private readonly calls: PluginCallsService,
    private readonly configs: PluginConfigService,
    private readonly localFolders: PluginFoldersService,
    private readonly supervisor: PluginSupervisor,
  ) {}

  /** Installed plugins (enabled and disabled). */
  @Get()
  @Authorize({ callers: ['board'] })
  list(@CurrentActor() actor: Actor) {
    assertInstanceAdmin(actor);
    return this.plugins.list();
  }

  /** Bundled plugins found in the checkout's examples/plugins (scanned once, then cached). */
  @Get('examples')
  @Authorize({ callers: ['board'] })
  examples(@CurrentActor() actor: Actor) {
    assertInstanceAdmin(actor);
    return this.plugins.examples();
  }

  /** UI slots and launchers of enabled plugins (any board user; [] when none). */
  @Get('ui-contributions')
  @Authorize({ callers: ['board'] })
  uiContributions(): Promise<PluginUiContributionDto[]> {
    return this.plugins.uiContributions();
  }

  /** Tools of enabled plugins, keyed `pluginKey:toolName`. Board users and agents. */
  @Get('tools')
  @Authorize({ callers: ['board', 'agent'] })
  tools() {
    return this.calls.tools();
  }

  /**
   * Runs a tool: input validated against its schema (422), time-limited (502 on timeout).
   * Any agent may call tools of enabled plugins, for its own company; board users for a company
   * they can access (or none).
   */
  @Post('tools/execute')
  @NoActivity('a call into a plugin worker; the tool records what it changes through the host API')
  @HttpCode(200)
  @Authorize({ callers: ['board', 'agent'] })
  execute(@CurrentActor() actor: Actor, @Body() dto: ExecuteToolDto) {
    return this.calls.executeTool(actor, dto.tool, dto.input ?? {}, dto.companyId);
  }

  /** Installs a package (validated manifest; disabled until enabled). 409 when the key is installed. */
  @Post('install')
  @InstanceAudit('plugin.installed')
  @HttpCode(201)
  @Authorize({ callers: ['board'] })
  install(@CurrentActor() actor: Actor, @Body() dto: InstallPluginDto) {
    return this.plugins.install(actor, dto);
  }

  /** An installed plugin with its worker state. */
  @Get(':pluginId')
  @Authorize({ callers: ['board'] })
  get(@CurrentActor() actor: Actor, @Param('pluginId') id: string) {
    assertInstanceAdmin(actor);
    return this.plugins.get(id);
  }

  /** Uninstalls: the worker stops, the record, job runs, folders and pending events are deleted. */
  @Delete(':pluginId')
  @InstanceAudit('plugin.uninstalled')
  @Authorize({ callers: ['board'] })
  uninstall(@CurrentActor() actor: Actor, @Param('pluginId') id: string) {
    return this.plugins.uninstall(actor, id);
  }

  /** Enables the plugin and starts its worker. */
  @Post(':pluginId/enable')
  @InstanceAudit('plugin.enabled')
  @HttpCode(200)
  @Authorize({ callers: ['board'] })
  enable(@CurrentActor() actor: Actor, @Param('pluginId') id: string) {
    return this.plugins.enable(actor, id);
  }

  /** Disables: hides UI contributions and tools, drains and stops the worker (TERM, then KILL). */
  @Post(':pluginId/disable')
  @InstanceAudit('plugin.disabled')
  @HttpCode(200)
  @Authorize({ callers: ['board'] })
  disable(@CurrentActor() actor: Actor, @Param('pluginId') id: string) {
    return this.plugins.disable(actor, id);
  }

  /** Replaces the package with a newer one of the same key (422 for another key). */
  @Post(':pluginId/upgrade')
  @InstanceAudit('plugin.upgraded')
  @HttpCode(200)
  @Authorize({ callers: ['board'] })
  upgrade(@CurrentActor() actor: Actor, @Param('pluginId') id: string, @Body() dto: UpgradePluginDto) {
    return this.plugins.upgrade(actor, id, dto);
  }

  /** Worker health: pings a running worker; state, pid, restarts, last crash. */
  @Get(':pluginId/health')
  @Authorize({ callers: ['board'] })
  health(@CurrentActor() actor: Actor, @Param('pluginId') id: string) {
    return this.plugins.health(actor, id);
  }

  /** Recent log lines of the plugin on this instance (worker stderr, host log calls, supervisor). */
  @Get(':pluginId/logs')
  @Authorize({ callers: ['board'] })
  logs(@CurrentActor() actor: Actor, @Param('pluginId') id: string, @Query() q: RecentQueryDto) {
    return this.plugins.logs(actor, id, q.limit ?? 200);
  }

  /** The resolved config (schema defaults filled in; secret fields as secret references). */
  @Get(':pluginId/config')
  @Authorize({ callers: ['board'] })
  getConfig(@CurrentActor() actor: Actor, @Param('pluginId') id: string) {
    return this.configs.getConfig(actor, id);
  }

  /** Writes the instance config (422 with problems when it does not fit the schema). */
  @Post(':pluginId/config')
  @InstanceAudit('plugin.config_updated')
  @HttpCode(200)
  @Authorize({ callers: ['board'] })
  setConfig(@CurrentActor() actor: Actor, @Param('pluginId') id: string, @Body() dto: PluginConfigDto) {
    return this.configs.setConfig(actor, id, dto.config, dto.secretsCompanyId);
  }

  /** Validates a candidate config (schema, then the worker's `config.test`) without saving: `{ ok, problems }`. */
  @Post(':pluginId/config/test')
  @NoActivity('validates a configuration without saving it')
  @HttpCode(200)
  @Authorize({ callers: ['board'] })
  testConfig(@CurrentActor() actor: Actor, @Param('pluginId') id: string, @Body() dto: TestPluginConfigDto) {
    return this.configs.testConfig(actor, id, dto.config);
  }

  /** Declared jobs with their last run. */
  @Get(':pluginId/jobs')
  @Authorize({ callers: ['board'] })
  jobs(@CurrentActor() actor: Actor, @Param('pluginId') id: string) {
    return this.calls.jobs(actor, id);
  }

  /** Recent runs of a job, newest first: trigger, status, duration. */
  @Get(':pluginId/jobs/:jobId/runs')
  @Authorize({ callers: ['board'] })
  runs(@CurrentActor() actor: Actor, @Param('pluginId') id: string, @Param('jobId') jobId: string, @Query() q: RecentQueryDto) {
    return this.calls.runs(actor, id, jobId, q.limit ?? 20);
  }

  /** Runs the job now and answers the finished run. 409 when the plugin is disabled. */
  @Post(':pluginId/jobs/:jobId/trigger')
  @InstanceAudit('plugin.job_triggered')
  @HttpCode(200)
  @Authorize({ callers: ['board'] })
  trigger(@CurrentActor() actor: Actor, @Param('pluginId') id: string, @Param('jobId') jobId: string) {
    return this.calls.trigger(actor, id, jobId);
  }

  /**
   * Inbound webhook, no credentials (the plugin authenticates the sender, e.g. by a signature
   * header): delivered to the worker, whose `{ status, body }` is the answer. Unknown plugin or
   * endpoint 404; a disabled plugin 409.
   */
  @Post(':pluginId/webhooks/:endpointKey')
  @NoActivity('an inbound webhook handed to the plugin worker; it records what it changes')
  @Public()
  async webhook(
    @Param('pluginId') id: string,
    @Param('endpointKey') key: string,
    @Req() req: FastifyRequest,
    @Headers() headers: Record<string, unknown>,
    @Res({ passthrough: true }) res: FastifyReply,
  ) {
    const out = await this.calls.webhook(id, key, { headers, body: req.body, query: req.query });
    void res.status(out.status);
    return out.body;
  }

  /** Local-folder mounts of the plugin for the company. */
  @Get(':pluginId/companies/:companyId/local-folders')
  @Authorize({ callers: ['board'] })
  folders(@CurrentActor() actor: Actor, @Param('pluginId') id: string, @Param('companyId') companyId: string) {
    return this.localFolders.folders(actor, id, companyId);
  }

  /** Whether the folder is configured, its problems and a listing summary. */
  @Get(':pluginId/companies/:companyId/local-folders/:folderKey/status')
  @Authorize({ callers: ['board'] })
  folderStatus(
    @CurrentActor() actor: Actor,
    @Param('pluginId') id: string,
    @Param('companyId') companyId: string,
    @Param('folderKey') key: string,
  ) {
    return this.localFolders.folderStatus(actor, id, companyId, key);
  }

  /** Validates a path (inside the allowed roots, a readable directory) without saving. */
  @Post(':pluginId/companies/:companyId/local-folders/:folderKey/validate')
  @NoActivity('validates a path without saving it')
  @HttpCode(200)
  @Authorize({ callers: ['board'] })
  validateFolder(
    @CurrentActor() actor: Actor,
    @Param('pluginId') id: string,
    @Param('folderKey') key: string,
    @Body() dto: LocalFolderDto,
  ) {
    return this.localFolders.validateFolderRoute(actor, id, key, dto.path);
  }

  /** Saves the mount (422 with problems for a path outside the allowed roots). */
  @Put(':pluginId/companies/:companyId/local-folders/:folderKey')
  @InstanceAudit('plugin.local_folder_set')
  @Authorize({ callers: ['board'] })
  putFolder(
    @CurrentActor() actor: Actor,
    @Param('pluginId') id: string,
    @Param('companyId') companyId: string,
    @Param('folderKey') key: string,
    @Body() dto: LocalFolderDto,
  ) {
    return this.localFolders.putFolder(actor, id, companyId, key, dto.path);
  }

  /** The plugin's dashboard payload (from the worker's `dashboard.get`). */
  @Get(':pluginId/dashboard')
  @Authorize({ callers: ['board'] })
  dashboard(@CurrentActor() actor: Actor, @Param('pluginId') id: string) {
    return this.calls.dashboard(actor, id);
  }

  /** Bridge data request `{ key, params, companyId }` to a declared data feed. */
  @Post(':pluginId/bridge/data')
  @NoActivity('a read through the plugin worker')
  @HttpCode(200)
  @Authorize({ callers: ['board'] })
  bridgeData(@CurrentActor() actor: Actor, @Param('pluginId') id: string, @Body() dto: BridgeCallDto) {
    return this.calls.data(actor, id, dto.key, dto.params, dto.companyId);
  }

  /** Bridge action request `{ key, params, companyId }` to a declared action. */
  @Post(':pluginId/bridge/action')
  @NoActivity('handed to the plugin worker; it records what it changes through the host API')
  @HttpCode(200)
  @Authorize({ callers: ['board'] })
  bridgeAction(@CurrentActor() actor: Actor, @Param('pluginId') id: string, @Body() dto: BridgeCallDto) {
    return this.calls.action(actor, id, dto.key, dto.params, dto.companyId);
  }

  /**
   * Server-Sent Events of a stream channel: each `stream.publish({ channel, data })` of the worker
   * is one `data:` message. Needs capability ui.stream.
   */
  @Get(':pluginId/bridge/stream/:channel')
  @Authorize({ callers: ['board'] })
  async stream(@CurrentActor() actor: Actor, @Param('pluginId') id: string, @Param('channel') channel: string, @Res() res: FastifyReply) {
    const p = await this.calls.openStream(actor, id);
    const name = `${p.id}:${channel}`;
    const raw = res.raw;
    raw.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
    raw.write(`: open ${channel}\n\n`);
    const send = (data: unknown) => raw.write(`data: ${JSON.stringify(data)}\n\n`);
    const ping = setInterval(() => raw.write(': ping\n\n'), 15_000);
    this.supervisor.streams.on(name, send);
    raw.on('close', () => {
      clearInterval(ping);
      this.supervisor.streams.off(name, send);
    });
  }

  /** UI entry point to a data feed. */
  @Post(':pluginId/data/:key')
  @NoActivity('a read of a plugin data feed')
  @HttpCode(200)
  @Authorize({ callers: ['board'] })
  data(@CurrentActor() actor: Actor, @Param('pluginId') id: string, @Param('key') key: string, @Body() dto: PluginCallDto) {
    return this.calls.data(actor, id, key, dto.params, dto.companyId);
  }

  /** UI entry point to an action. */
  @Post(':pluginId/actions/:key')
  @NoActivity('handed to the plugin worker; it records what it changes through the host API')
  @HttpCode(200)
  @Authorize({ callers: ['board'] })
  action(@CurrentActor() actor: Actor, @Param('pluginId') id: string, @Param('key') key: string, @Body() dto: PluginCallDto) {
    return this.calls.action(actor, id, key, dto.params, dto.companyId);
  }
}
