import { Module } from '@nestjs/common';
import { SecretsModule } from '../secrets/secrets.module';
import { PluginSupervisor } from './plugin-supervisor.service';
import { PluginsController } from './plugins.controller';
import { PluginsScheduler } from './plugins.jobs';
import { PluginsRepository } from './plugins.repository';
import { PluginsService } from './plugins.service';

/** Plugins: installable packages run as supervised JSON-RPC workers (jobs, webhooks, tools, data, actions, config, events). */
@Module({
  imports: [SecretsModule],
  controllers: [PluginsController],
  providers: [PluginsRepository, PluginSupervisor, PluginsService, PluginsScheduler],
  exports: [PluginsService, PluginsScheduler, PluginSupervisor],
})
export class PluginsModule {}
