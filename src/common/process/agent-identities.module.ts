import { Module } from '@nestjs/common';
import { AppConfig } from '../../config/app-config';
import { AgentIdentities } from './agent-identities';

/** One host-wide identity registry per instance (see agent-identities.ts). */
@Module({
  providers: [
    { provide: AgentIdentities, useFactory: (config: AppConfig) => new AgentIdentities(config.agentIdentity), inject: [AppConfig] },
  ],
  exports: [AgentIdentities],
})
export class AgentIdentitiesModule {}
