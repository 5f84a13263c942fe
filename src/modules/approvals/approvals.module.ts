import { Module } from '@nestjs/common';
import { ApprovalsController } from './approvals.controller';
import { ApprovalsRepository } from './approvals.repository';
import { ApprovalsService } from './approvals.service';
import { HiredAgents } from './hired-agents.port';
import { AuthorizationModule } from '../authorization/authorization.module';
import { ApprovalCompanyRepository } from './approval-company.repository';

@Module({
  imports: [AuthorizationModule],
  controllers: [ApprovalsController],
  providers: [ApprovalCompanyRepository, ApprovalsService, ApprovalsRepository, HiredAgents],
  exports: [ApprovalsService, HiredAgents],
})
export class ApprovalsModule {}
