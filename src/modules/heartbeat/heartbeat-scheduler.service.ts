import { Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown, Optional } from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { AppConfig } from '../../config/app-config';
import { Db } from '../../database/db.service';
import { HeartbeatAgentsRepository } from './heartbeat-agents.repository';
import { HeartbeatRunsRepository } from './heartbeat-runs.repository';
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
export class HeartbeatScheduler implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('HeartbeatScheduler');
  private busy = { tick: false, reaper: false };
  private stopped = false;

  constructor(
    private readonly db: Db,
    private readonly config: AppConfig,
    private readonly queue: WakeupQueue,
    private readonly lifecycle: RunLifecycle,
    private readonly dispatcher: RunDispatcher,
    private readonly runs: HeartbeatRunsRepository,
    private readonly agents: HeartbeatAgentsRepository,
    @Optional() private readonly registry?: SchedulerRegistry,
  ) {}

  onApplicationBootstrap(): void {
    if (!this.registry) return;
    this.registry.addInterval(
      TICK,
      setInterval(() => void this.guarded('tick', () => this.tick()), this.config.heartbeat.tickMs),
    );
    this.registry.addInterval(
      REAPER,
      setInterval(() => void this.guarded('reaper', () => this.reap()), this.config.heartbeat.reaperMs),
    );
  }

  onApplicationShutdown(): void {
    this.stopped = true;
    for (const name of [TICK, REAPER]) {
      try {
        this.registry?.deleteInterval(name);
      } catch {
        /* not registered */
      }
    }
  }

  async tick(): Promise<void> {
    await this.fireDueTimers();
    this.dispatcher.kick();
  }

  /** Claims agents whose timer is due (skipping rows another instance holds) and wakes each once. */
  async fireDueTimers(): Promise<number> {
    return this.db.transaction(async () => {
      const due = await this.agents.claimDueTimers();
      for (const a of due) {
        await this.queue.enqueue({
          companyId: a.company_id,
          agentId: a.id,
          source: 'timer',
          triggerDetail: 'system',
          reason: 'heartbeat_timer',
        });
      }
      return due.length;
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

  private async guarded(which: 'tick' | 'reaper', fn: () => Promise<void>): Promise<void> {
    if (this.busy[which] || this.stopped) return;
    this.busy[which] = true;
    try {
      await fn();
    } catch (err) {
      if (!this.stopped) this.logger.error(`${which} failed: ${(err as Error).message}`);
    } finally {
      this.busy[which] = false;
    }
  }
}
