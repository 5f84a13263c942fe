import { AgentIdentitiesModule } from '../../common/process/agent-identities.module';
import { Module } from '@nestjs/common';
import { AdapterExecutors } from './adapter-executors';
import { AdapterRegistry } from './adapter-registry.service';
import { AdaptersController } from './adapters.controller';
import { CompanyAdaptersController } from './company-adapters.controller';
import { RuntimeSetupService } from './runtimes/runtime-setup.service';
import { SecretsModule } from '../secrets/secrets.module';
import { AdaptersRepository } from './adapters.repository';
import { ExternalAdaptersService } from './external-adapters.service';
import { AiConnectionEnv } from './runtimes/ai-connection-env.port';
import { ProbeCosts } from './runtimes/probe-costs.port';

/**
 * Adapters: the type registry (agents validate with it), the executors by type (built-in ones and
 * external packages; the heartbeat engine runs with them), and the administration of external
 * adapter packages (installed, loaded on every instance). Consumers import this module; the
 * heartbeat engine asks ExternalAdaptersService whether a type is force-disabled.
 */
@Module({
  imports: [SecretsModule, AgentIdentitiesModule],
  controllers: [AdaptersController, CompanyAdaptersController],
  providers: [
    AdapterRegistry,
    AdapterExecutors,
    AdaptersRepository,
    ExternalAdaptersService,
    RuntimeSetupService,
    AiConnectionEnv,
    ProbeCosts,
  ],
  exports: [AdapterRegistry, AdapterExecutors, ExternalAdaptersService, AiConnectionEnv, ProbeCosts],
})
export class AdaptersModule {}
