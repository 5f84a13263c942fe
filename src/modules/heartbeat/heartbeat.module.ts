import { Module, OnModuleInit } from '@nestjs/common';
import { LiveEventsModule } from '../../common/events/live-events.module';
import { AgentIdentitiesModule } from '../../common/process/agent-identities.module';
import { AgentIdentities } from '../../common/process/agent-identities';
import { SecretBindingsService } from '../secrets/secret-bindings.service';
import { AdaptersModule } from '../adapters/adapters.module';
import { ExternalAdaptersService } from '../adapters/external-adapters.service';
import { AgentWakeupService } from './agent-wakeup.service';
import { HeartbeatAgents } from './heartbeat-agents.port';
import { HeartbeatRunsRepository } from './heartbeat-runs.repository';
import { HeartbeatRunsService } from './heartbeat-runs.service';
import { HeartbeatScheduler } from './heartbeat.jobs';
import { HeartbeatController } from './heartbeat.controller';
import { RunDispatcher } from './run-dispatcher.service';
import { RunEnvResolver } from './run-env.service';
import { RunExecutor } from './run-executor.service';
import { RunLifecycleEvents } from './run-lifecycle-events.port';
import { RunLifecycle } from './run-lifecycle.service';
import { RunLiveEvents } from './run-live-events';
import { RunLogService } from './run-log.service';
import { RunProcessGroups } from './run-process-groups.service';
import { RunClaimsRepository } from './run-claims.repository';
import { RunGatesRepository } from './run-gates.repository';
import { RunRecoveryRepository } from './run-recovery.repository';
import { RunRetry } from './run-retry.service';
import { RunTokenResolver } from './run-token.resolver';
import { RunTokenService } from './run-token.service';
import { RunUsageMonitor } from './run-usage-monitor.service';
import { WakeupQueue } from './wakeup-queue.service';
import { WakeupRequestsRepository } from './wakeup-requests.repository';
import { SecretsModule } from '../secrets/secrets.module';
import { BudgetsModule } from '../budgets/budgets.module';
import { recordCompanies } from '../../common/references/record-company.repository';
import { RunWakeDetails } from './run-wake-details.port';
import { RunViewsController } from './run-views.controller';
import { RunViewsRepository } from './run-views.repository';
import { RunViewsService } from './run-views.service';
import { RunAuthRegistration } from './auth-registry.port-impl';
import { IssueHolds } from './issue-holds.port';
import { LaunchContributors } from './launch-contributors.port';
import { RunCancellation } from './work-cancellation.port-impl';

/**
 * The heartbeat engine: wakeups, runs, dispatch, leases and the reaper, timers, run tokens; runs
 * execute through the adapters module's executors. Exported for other modules: WakeupQueue
 * (enqueue), RunDispatcher, RunTokenService, HeartbeatRunsService, and the ports other modules
 * register with (the Ports table of docs/architecture.md): RunLifecycleEvents, HeartbeatAgents,
 * RunWakeDetails, IssueHolds, LaunchContributors.
 */
@Module({
  imports: [AdaptersModule, BudgetsModule, SecretsModule, LiveEventsModule, AgentIdentitiesModule],
  controllers: [HeartbeatController, RunViewsController],
  providers: [
    recordCompanies('heartbeat'),
    WakeupQueue,
    RunLifecycle,
    RunLifecycleEvents,
    RunDispatcher,
    RunExecutor,
    HeartbeatScheduler,
    HeartbeatRunsService,
    AgentWakeupService,
    RunLogService,
    RunTokenService,
    RunTokenResolver,
    RunEnvResolver,
    RunRecoveryRepository,
    RunProcessGroups,
    RunRetry,
    RunLiveEvents,
    RunUsageMonitor,
    HeartbeatRunsRepository,
    WakeupRequestsRepository,
    HeartbeatAgents,
    RunClaimsRepository,
    RunGatesRepository,
    RunWakeDetails,
    RunViewsRepository,
    RunViewsService,
    IssueHolds,
    LaunchContributors,
    RunAuthRegistration,
    RunCancellation,
  ],
  exports: [
    WakeupQueue,
    RunLifecycleEvents,
    RunDispatcher,
    RunTokenService,
    HeartbeatRunsService,
    HeartbeatAgents,
    RunWakeDetails,
    RunViewsService,
    IssueHolds,
    LaunchContributors,
  ],
})
export class HeartbeatModule implements OnModuleInit {
  constructor(
    private readonly runEnv: RunEnvResolver,
    private readonly secretBindings: SecretBindingsService,
    private readonly queue: WakeupQueue,
    private readonly externalAdapters: ExternalAdaptersService,
    private readonly identities: AgentIdentities,
  ) {}

  onModuleInit(): void {
    // run scratch left by instances of this host that died mid-run
    try {
      this.identities.sweepScratch();
    } catch {
      /* nothing to sweep yet */
    }
    // secret bindings (delivery env|both) of the agent and the run's project, decrypted at launch
    this.runEnv.registerLaunchResolver(({ companyId, agentId, projectId }) =>
      this.secretBindings.resolveForLaunch(companyId, agentId, { projectId }),
    );
    // a force-disabled adapter type: its agents' wakes are skipped (`adapter_disabled`)
    this.queue.registerSkipCheck((adapterType) => this.externalAdapters.wakeSkipReason(adapterType));
  }
}
