import { recordCompanies } from '../../common/references/record-company.repository';
import { Module } from '@nestjs/common';
import { LiveEventsModule } from '../../common/events/live-events.module';
import { HeartbeatModule } from '../heartbeat/heartbeat.module';
import { SecretsModule } from '../secrets/secrets.module';
import { ToolAccessService } from './tool-access.service';
import { ToolActionRequestsController } from './tool-action-requests.controller';
import { ToolActionRequestsRepository } from './tool-action-requests.repository';
import { ToolActionRequestsService } from './tool-action-requests.service';
import { ToolAppsService } from './tool-apps.service';
import { ToolConnectionsController } from './tool-connections.controller';
import { ToolConnectionsRepository } from './tool-connections.repository';
import { ToolConnectionsService } from './tool-connections.service';
import { ToolDecisionsController } from './tool-decisions.controller';
import { ToolDecisionsService } from './tool-decisions.service';
import { ToolGateway } from './tool-gateway.service';
import { ToolInvocationsRepository } from './tool-invocations.repository';
import { ToolProfilesController } from './tool-profiles.controller';
import { ToolProfilesRepository } from './tool-profiles.repository';
import { ToolProfilesService } from './tool-profiles.service';
import { ToolRunServers } from './tool-run-servers';
import { ToolLaunchContribution } from './launch-contributors.port-impl';

/**
 * Company tool connections (MCP servers): connections and their catalogs, the gallery, profiles
 * with per-tool policies, the gateway to remote servers with its action requests, and the local
 * servers of each run's CLI configuration. See docs/mcp.md.
 */
@Module({
  imports: [HeartbeatModule, SecretsModule, LiveEventsModule],
  controllers: [ToolConnectionsController, ToolProfilesController, ToolActionRequestsController, ToolDecisionsController],
  providers: [
    recordCompanies('tools'),
    ToolConnectionsRepository,
    ToolProfilesRepository,
    ToolActionRequestsRepository,
    ToolInvocationsRepository,
    ToolConnectionsService,
    ToolAppsService,
    ToolAccessService,
    ToolProfilesService,
    ToolActionRequestsService,
    ToolDecisionsService,
    ToolGateway,
    ToolRunServers,
    ToolLaunchContribution,
  ],
  exports: [ToolGateway],
})
export class ToolsModule {}
