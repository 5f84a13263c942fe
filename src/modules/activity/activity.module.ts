import { Module } from '@nestjs/common';
import { ActivityAnchorsScheduler } from './activity-anchors.jobs';
import { ActivityChainController } from './activity-chain.controller';
import { ActivityChainRepository } from './activity-chain.repository';
import { ActivityChainService } from './activity-chain.service';
import { ActivityController } from './activity.controller';
import { ActivityRepository } from './activity.repository';
import { ActivityService } from './activity.service';
import { AgentActionsAuditController } from './agent-actions-audit.controller';
import { AnchorLedger } from './anchor-ledger';
import { AuditSigner } from './audit-signer';

/**
 * A company's activity feed and audit: the activity list, the hash chain's verification and its
 * anchors (`activity_chain_anchors`, `activity_anchor_schedule`), the agent-actions audit.
 */
@Module({
  controllers: [ActivityController, ActivityChainController, AgentActionsAuditController],
  providers: [
    ActivityService,
    ActivityRepository,
    ActivityChainService,
    ActivityChainRepository,
    AuditSigner,
    AnchorLedger,
    ActivityAnchorsScheduler,
  ],
  exports: [ActivityService],
})
export class ActivityModule {}
