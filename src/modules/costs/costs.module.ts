import { Module } from '@nestjs/common';
import { AdaptersModule } from '../adapters/adapters.module';
import { CostEventsService } from './cost-events.service';
import { CostReportsService } from './cost-reports.service';
import { CostsController } from './costs.controller';
import { CostsRepository } from './costs.repository';
import { FinanceRepository } from './finance.repository';
import { FinanceController } from './finance.controller';
import { FinanceService } from './finance.service';
import { RunCostBooking } from './run-cost-booking.service';
import { RunCostHooks } from './run-lifecycle-events.port-impl';
import { RunCostsRepository } from './run-costs.repository';
import { BudgetsModule } from '../budgets/budgets.module';
import { HeartbeatModule } from '../heartbeat/heartbeat.module';
import { recordCompanies } from '../../common/references/record-company.repository';
import { ProbeCostsRegistration } from './probe-costs.port-impl';

/**
 * Cost events, cost reports and finance events; runs' usage booked as cost events, and environment
 * tests' prompts booked through adapters' ProbeCosts port. Budget enforcement comes from the global
 * BudgetsModule.
 */
@Module({
  imports: [AdaptersModule, HeartbeatModule, BudgetsModule],
  controllers: [CostsController, FinanceController],
  providers: [
    recordCompanies('costs'),
    CostsRepository,
    FinanceRepository,
    CostEventsService,
    CostReportsService,
    FinanceService,
    RunCostBooking,
    RunCostHooks,
    RunCostsRepository,
    ProbeCostsRegistration,
  ],
})
export class CostsModule {}
