import { Module } from '@nestjs/common';
import { ApprovalHandlersRegistration } from './approval-handlers.port-impl';
import { SkillsBridgePort } from './skills-bridge.port';
import { AccessModule } from '../access/access.module';
import { AdaptersModule } from '../adapters/adapters.module';
import { AgentsModule } from '../agents/agents.module';
import { ApprovalsModule } from '../approvals/approvals.module';
import { InstanceModule } from '../instance/instance.module';
import { RoutinesModule } from '../routines/routines.module';
import { BuiltInAgentsController } from './built-in-agents.controller';
import { BuiltInAgentsService } from './built-in-agents.service';
import { BuiltInBundle } from './built-in-bundle.service';
import { ChangeSuggestionsController } from './change-suggestions.controller';
import { ChangeSuggestionsService } from './change-suggestions.service';
import { AuthorizationModule } from '../authorization/authorization.module';

/**
 * Built-in agents from the registry (provisioning, lifecycle state, their routines) and suggested
 * changes through approvals. Exported: BuiltInAgentsService (`require()` for internal features;
 * `skills` is the hook a skills module sets).
 */
@Module({
  imports: [AdaptersModule, AuthorizationModule, AgentsModule, ApprovalsModule, AccessModule, InstanceModule, RoutinesModule],
  controllers: [BuiltInAgentsController, ChangeSuggestionsController],
  providers: [BuiltInAgentsService, BuiltInBundle, ChangeSuggestionsService, SkillsBridgePort, ApprovalHandlersRegistration],
  exports: [BuiltInAgentsService, SkillsBridgePort],
})
export class BuiltInAgentsModule {}
