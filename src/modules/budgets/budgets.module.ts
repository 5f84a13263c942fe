import { Global, Module } from '@nestjs/common';
import { BudgetSyncService } from './budget-sync.service';

@Global()
@Module({
  providers: [BudgetSyncService],
  exports: [BudgetSyncService],
})
export class BudgetsModule {}
