import { Global, Module } from '@nestjs/common';
import { AdapterRegistry } from './adapter-registry.service';

/** The adapter type registry, shared by agents (validation) and the heartbeat engine (execution). */
@Global()
@Module({ providers: [AdapterRegistry], exports: [AdapterRegistry] })
export class AdaptersModule {}
