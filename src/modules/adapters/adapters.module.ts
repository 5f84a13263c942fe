import { Global, Module } from '@nestjs/common';
import { HeartbeatModule } from '../heartbeat/heartbeat.module';
import { AdapterRegistry } from './adapter-registry.service';
import { AdaptersController } from './adapters.controller';
import { AdaptersRepository } from './adapters.repository';
import { ExternalAdaptersService } from './external-adapters.service';

/**
 * The adapter type registry, shared by agents (validation) and the heartbeat engine (execution),
 * and the administration of external adapter packages (installed, loaded on every instance).
 */
@Global()
@Module({
  imports: [HeartbeatModule],
  controllers: [AdaptersController],
  providers: [AdapterRegistry, AdaptersRepository, ExternalAdaptersService],
  exports: [AdapterRegistry],
})
export class AdaptersModule {}
