import { Injectable, OnModuleInit } from '@nestjs/common';
import { ActivityRecorder } from '../../common/activity/activity-recorder.service';
import { BudgetGate } from '../budgets/budget-gate.service';
import { HeartbeatAgents } from './heartbeat-agents.port';
import { HeartbeatRunsRepository } from './heartbeat-runs.repository';
import type { WakeContext } from '../adapters/run.types';
import type { RunRecord } from './heartbeat.types';
import { RunLifecycle } from './run-lifecycle.service';
import { RunRecoveryRepository } from './run-recovery.repository';
import { NOT_RUNNABLE_AGENT_STATUSES, recordRunActivity } from './run-store';

/** Ends that mean "the instance running it died", not "the agent's work failed". */
export const INSTANCE_LOSS_CODES = ['orphaned_run', 'instance_shutdown', 'lease_expired'];

/**
 * A run lost with its instance (`orphaned_run`, `instance_shutdown`, `lease_expired`) is re-queued
 * once for the same wake context, so work an assignment or a comment asked for is not silently
 * dropped: in the transaction that ends it (agent lock held), unless the agent is paused,
 * terminated or pending approval, or a budget blocks it. The new wake points at the lost run
 * (`retry_of_run_id`); when the retried run is lost too, it stays failed. If another run of the
 * agent is live on the same issue, the retry waits behind it as a deferred wake.
 */
@Injectable()
export class RunRetry implements OnModuleInit {
  constructor(
    private readonly agents: HeartbeatAgents,
    private readonly lifecycle: RunLifecycle,
    private readonly repo: RunRecoveryRepository,
    private readonly runs: HeartbeatRunsRepository,
    private readonly budgetGate: BudgetGate,
    private readonly recorder: ActivityRecorder,
  ) {}

  onModuleInit(): void {
    this.lifecycle.onRunEnded((run) => this.retryLost(run));
  }

  async retryLost(run: RunRecord): Promise<void> {
    if (run.status !== 'failed' || !run.errorCode || !INSTANCE_LOSS_CODES.includes(run.errorCode)) return;
    const context = run.contextSnapshot ?? ({} as WakeContext);
    const wakeIds = [...(context.wakeupRequestIds ?? []), ...(run.wakeupRequestId ? [run.wakeupRequestId] : [])];
    const skip = (reason: string) =>
      recordRunActivity(this.recorder, 'heartbeat.run_retry_skipped', run, { reason, errorCode: run.errorCode });
    if (await this.repo.isRetry(run.companyId, wakeIds)) return void (await skip('already_retried'));
    const agent = await this.agents.lock(run.companyId, run.agentId);
    if (!agent) return;
    if (NOT_RUNNABLE_AGENT_STATUSES.includes(agent.status)) return void (await skip(`agent_${agent.status}`));
    const projectId = typeof context.projectId === 'string' ? context.projectId : null;
    if (!(await this.budgetGate.checkBeforeRun(run.companyId, run.agentId, projectId)).allowed) return void (await skip('budget'));
    const deferred = !!run.issueId && (await this.runs.hasLiveOnIssue(run.companyId, run.agentId, run.issueId));
    const wake = await this.repo.insertRetryWake(run, context, deferred ? 'deferred' : 'queued');
    let newRunId: string | null = null;
    if (!deferred) {
      const retryContext: WakeContext = { ...context, wakeupRequestIds: [wake.id], retryOfRunId: run.id };
      newRunId = (await this.lifecycle.createRun(agent, wake, retryContext)).id;
    }
    await recordRunActivity(this.recorder, 'heartbeat.run_retried', run, {
      errorCode: run.errorCode,
      wakeupRequestId: wake.id,
      newRunId,
      deferred,
    });
  }
}
