import { Global, Module } from '@nestjs/common';
import { AdapterRegistry } from './adapter-registry.service';
import { AdaptersController } from './adapters.controller';
import { HeartbeatModule } from '../heartbeat/heartbeat.module';

/** The adapter type registry, shared by agents (validation) and the heartbeat engine (execution). */
@Global()
@Module({
  imports: [HeartbeatModule], controllers: [AdaptersController], providers: [AdapterRegistry], exports: [AdapterRegistry] })
export class AdaptersModule {}
