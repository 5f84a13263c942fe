import { Module, OnModuleInit } from '@nestjs/common';
import { LiveEventBus } from '../../common/events/live-event-bus';
import { LiveEventsModule } from '../../common/events/live-events.module';
import { AgentIdentitiesModule } from '../../common/process/agent-identities.module';
import { SecretsModule } from '../secrets/secrets.module';
import { PluginCallsService } from './plugin-calls.service';
import { PluginConfigService } from './plugin-config.service';
import { PluginCore } from './plugin-core.service';
import { PluginFoldersService } from './plugin-folders.service';
import { PluginHostApiService } from './plugin-host-api.service';
import { PluginSupervisor } from './plugin-supervisor.service';
import { PluginsController } from './plugins.controller';
import { PluginsScheduler } from './plugins.jobs';
import { PluginsRepository } from './plugins.repository';
import { PluginCompanyRepository } from './plugin-company.repository';
import { PluginsService } from './plugins.service';

/** Plugins: installable packages run as supervised JSON-RPC workers (jobs, webhooks, tools, data, actions, config, events). */
@Module({
  imports: [SecretsModule, LiveEventsModule, AgentIdentitiesModule],
  controllers: [PluginsController],
  providers: [
    PluginsRepository,
    PluginCompanyRepository,
    PluginSupervisor,
    PluginCore,
    PluginsService,
    PluginConfigService,
    PluginCallsService,
    PluginFoldersService,
    PluginHostApiService,
    PluginsScheduler,
  ],
  exports: [PluginsService, PluginsScheduler, PluginSupervisor],
})
export class PluginsModule implements OnModuleInit {
  constructor(
    private readonly supervisor: PluginSupervisor,
    private readonly events: LiveEventBus,
  ) {}

  /** Worker crashes and restarts appear on every company's live stream. */
  onModuleInit(): void {
    this.supervisor.eventSink = (type, payload) => void this.events.publishToEveryCompany(type, payload).catch(() => undefined);
  }
}
