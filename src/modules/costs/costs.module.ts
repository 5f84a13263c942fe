import { Module } from '@nestjs/common';
import { CostEventsService } from './cost-events.service';
import { CostReportsService } from './cost-reports.service';
import { CostsController } from './costs.controller';
import { FinanceController } from './finance.controller';
import { FinanceService } from './finance.service';

/** Cost events, cost reports and finance events. Budget enforcement comes from the global BudgetsModule. */
@Module({
  controllers: [CostsController, FinanceController],
  providers: [CostEventsService, CostReportsService, FinanceService],
})
export class CostsModule {}
