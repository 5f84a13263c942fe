import { Module } from '@nestjs/common';
import { BudgetEnforcementService } from './budget-enforcement.service';
import { BudgetGate } from './budget-gate.service';
import { BudgetIncidentsRepository } from './budget-incidents.repository';
import { BudgetIncidentsService } from './budget-incidents.service';
import { BudgetPoliciesService } from './budget-policies.service';
import { BudgetScopeOwners } from './budget-scope-owners.port';
import { BudgetSyncService } from './budget-sync.service';
import { BudgetUsageService } from './budget-usage.service';
import { BudgetsController } from './budgets.controller';
import { BudgetsScheduler } from './budgets.jobs';
import { BudgetsRepository } from './budgets.repository';
import { Clock } from './clock.service';

/**
 * Budgets: policies, incidents and enforcement. Global so that companies and agents can sync their
 * monthly policy (BudgetSyncService), the heartbeat engine can ask BudgetGate before a run, and the
 * costs module can feed usage and enforcement.
 */
@Module({
  controllers: [BudgetsController],
  providers: [
    Clock,
    BudgetsRepository,
    BudgetIncidentsRepository,
    BudgetScopeOwners,
    BudgetSyncService,
    BudgetUsageService,
    BudgetEnforcementService,
    BudgetGate,
    BudgetPoliciesService,
    BudgetIncidentsService,
    BudgetsScheduler,
  ],
  exports: [Clock, BudgetScopeOwners, BudgetPoliciesService, BudgetSyncService, BudgetUsageService, BudgetEnforcementService, BudgetGate],
})
export class BudgetsModule {}
