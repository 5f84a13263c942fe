import { Module } from '@nestjs/common';
import { ApprovalsController } from './approvals.controller';
import { ApprovalsRepository } from './approvals.repository';
import { ApprovalsService } from './approvals.service';
import { HiredAgents } from './hired-agents.port';
import { ApprovalHandlers } from './approval-handlers.port';
import { AuthorizationModule } from '../authorization/authorization.module';
import { recordCompanies } from '../../common/references/record-company.repository';

/**
 * Approvals (`approvals`): requests, decisions and comments; a decision runs what its type
 * registered (the ports HiredAgents and ApprovalHandlers, filled by agents and built-in agents).
 */
@Module({
  imports: [AuthorizationModule],
  controllers: [ApprovalsController],
  providers: [recordCompanies('approvals'), ApprovalsService, ApprovalsRepository, HiredAgents, ApprovalHandlers],
  exports: [ApprovalsService, HiredAgents, ApprovalHandlers],
})
export class ApprovalsModule {}
