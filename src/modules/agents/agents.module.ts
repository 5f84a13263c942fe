import { Module } from '@nestjs/common';
import { ApprovalsModule } from '../approvals/approvals.module';
import { AgentAccessService } from './agent-access.service';
import { AgentConfigService } from './agent-config.service';
import { AgentKeysService } from './agent-keys.service';
import { AgentLifecycleService } from './agent-lifecycle.service';
import { AgentLookup } from './agent-lookup.service';
import { AgentsController } from './agents.controller';
import { AgentsService } from './agents.service';

@Module({
  imports: [ApprovalsModule],
  controllers: [AgentsController],
  providers: [AgentsService, AgentLookup, AgentConfigService, AgentAccessService, AgentLifecycleService, AgentKeysService],
  exports: [AgentsService, AgentLookup, AgentConfigService, AgentLifecycleService],
})
export class AgentsModule {}
