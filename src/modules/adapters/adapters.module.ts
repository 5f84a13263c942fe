import { Global, Module } from '@nestjs/common';
import { AdapterRegistry } from './adapter-registry.service';
import { AdaptersController } from './adapters.controller';

/** The adapter type registry, shared by agents (validation) and the heartbeat engine (execution). */
@Global()
@Module({ controllers: [AdaptersController], providers: [AdapterRegistry], exports: [AdapterRegistry] })
export class AdaptersModule {}
