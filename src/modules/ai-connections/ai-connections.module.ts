import { Module } from '@nestjs/common';
import { AdaptersModule } from '../adapters/adapters.module';
import { AgentsModule } from '../agents/agents.module';
import { HeartbeatModule } from '../heartbeat/heartbeat.module';
import { SecretsModule } from '../secrets/secrets.module';
import { AiConnectionBindings } from './ai-connection-bindings.service';
import { AiConnectionEnvRegistration } from './ai-connection-env.port-impl';
import { AiConnectionsController } from './ai-connections.controller';
import { AiConnectionsRepository } from './ai-connections.repository';
import { AiConnectionsService } from './ai-connections.service';
import { ClaudeLoginStatusController } from './claude-login-status.controller';

/**
 * AI connections: a company's model-provider accounts (key as a company secret, base URL, default
 * model). Agents and the new-agent form's environment test (adapters, below this module) reach
 * them through the AiConnectionEnv port, registered here.
 */
@Module({
  imports: [AdaptersModule, AgentsModule, HeartbeatModule, SecretsModule],
  controllers: [AiConnectionsController, ClaudeLoginStatusController],
  providers: [AiConnectionsRepository, AiConnectionsService, AiConnectionBindings, AiConnectionEnvRegistration],
  exports: [AiConnectionsService],
})
export class AiConnectionsModule {}
