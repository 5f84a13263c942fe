import { Module } from '@nestjs/common';
import { ActivityController } from './activity.controller';
import { ActivityRepository } from './activity.repository';
import { ActivityService } from './activity.service';
import { AgentActionsAuditController } from './agent-actions-audit.controller';

@Module({
  controllers: [ActivityController, AgentActionsAuditController],
  providers: [ActivityService, ActivityRepository],
  exports: [ActivityService],
})
export class ActivityModule {}
