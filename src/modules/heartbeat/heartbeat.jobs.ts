import { Injectable, Optional } from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { IntervalJob, JobInterval } from '../../common/jobs/interval-job';
import { AppConfig } from '../../config/app-config';
import { Db } from '../../database/db.service';
import { type AgentRef, HeartbeatAgents } from './heartbeat-agents.port';
import { RunClaimsRepository } from './run-claims.repository';
import { RunDispatcher } from './run-dispatcher.service';
import { RunLifecycle } from './run-lifecycle.service';
import { WakeupQueue } from './wakeup-queue.service';

const TICK = 'heartbeat.tick';
const REAPER = 'heartbeat.reaper';

/**
 * The engine's scheduled ticks, registered with @nestjs/schedule when the app runs its scheduler
 * (intervals from config, so tests can make them fast):
 * - tick: fire due timer heartbeats (claimed in the database: once per interval across instances),
 *   then poll for queued runs other instances' wakes left.
 * - reaper: fail runs whose lease expired (their instance died), fail own runs with no process,
 *   promote deferred wakes whose run is gone.
 */
@Injectable()
export class HeartbeatScheduler extends IntervalJob {
  constructor(
    private readonly db: Db,
    private readonly config: AppConfig,
    private readonly queue: WakeupQueue,
    private readonly lifecycle: RunLifecycle,
    private readonly dispatcher: RunDispatcher,
    private readonly runs: RunClaimsRepository,
    private readonly agents: HeartbeatAgents,
    @Optional() registry?: SchedulerRegistry,
  ) {
    super('HeartbeatScheduler', registry);
  }

  protected intervals(): JobInterval[] {
    return [
      { name: TICK, everyMs: this.config.heartbeat.tickMs, what: 'tick', run: () => this.tick() },
      { name: REAPER, everyMs: this.config.heartbeat.reaperMs, what: 'reaper', run: () => this.reap() },
    ];
  }

  async tick(): Promise<void> {
    await this.fireDueTimers();
    this.dispatcher.kick();
  }

  /**
   * Claims agents whose timer is due (skipping rows another instance holds) and wakes each once,
   * in one transaction. When one agent's wake fails, that batch rolls back and the due agents are
   * fired one by one, each in its own transaction: the failing agent (logged with its company) is
   * retried at the next tick, and every other company's timers still fire.
   */
  async fireDueTimers(): Promise<number> {
    try {
      return await this.db.transaction(async () => {
        const due = await this.agents.claimDueTimers();
        for (const a of due) await this.wakeForTimer(a);
        return due.length;
      });
    } catch (err) {
      if (this.stopped) throw err;
      this.logger.warn(`timer batch failed (${(err as Error).message}); firing the due agents one by one`);
      return this.fireDueTimersOneByOne();
    }
  }

  private async fireDueTimersOneByOne(): Promise<number> {
    const failed: string[] = [];
    let fired = 0;
    for (let i = 0; i < 100 && !this.stopped; i++) {
      const failedBefore = failed.length;
      const claimed = await this.db
        .transaction(async () => {
          const a = await this.agents.claimOneDueTimer(failed);
          if (!a) return false;
          try {
            await this.wakeForTimer(a);
          } catch (err) {
            failed.push(a.id);
            this.logger.error(`timer wake of agent ${a.id} (company ${a.companyId}) failed: ${(err as Error).message}`);
            throw err;
          }
          return true;
        })
        .catch((err: unknown) => {
          if (failed.length === failedBefore) throw err; // the claim itself failed: not one agent's problem
          return true;
        });
      if (!claimed) break;
      if (failed.length === failedBefore) fired++;
    }
    return fired;
  }

  private wakeForTimer(a: AgentRef): Promise<unknown> {
    return this.queue.enqueue({
      companyId: a.companyId,
      agentId: a.id,
      source: 'timer',
      triggerDetail: 'system',
      reason: 'heartbeat_timer',
    });
  }

  async reap(): Promise<void> {
    const expired = await this.runs.leaseExpired();
    for (const r of expired) {
      await this.lifecycle.finishRun(
        r.id,
        { status: 'failed', errorCode: 'lease_expired', error: 'the instance running it stopped renewing its lease (presumed dead)' },
        { onlyIfLeaseExpired: true },
      );
    }
    await this.dispatcher.reapOwnOrphans();
    await this.lifecycle.promoteStrandedDeferred();
  }
}
