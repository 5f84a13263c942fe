import { Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown, Optional } from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { AppConfig } from '../../config/app-config';
import { Db } from '../../database/db.service';
import { RunDispatcher } from './run-dispatcher.service';
import { RunLifecycle } from './run-lifecycle.service';
import { updateReturning } from './run-store';
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
      const due = await updateReturning<{ id: string; company_id: string }>(
        this.db,
        `UPDATE agents a SET heartbeat_last_fired_at = now()
           FROM (SELECT id FROM agents WHERE heartbeat_next_due_at <= now() ORDER BY heartbeat_next_due_at LIMIT 100 FOR NO KEY UPDATE SKIP LOCKED) d
          WHERE a.id = d.id RETURNING a.id, a.company_id`,
        [],
      );
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
    const expired = (await this.db.dataSource.query(
      `SELECT id FROM heartbeat_runs WHERE status = 'running' AND lease_expires_at < now() ORDER BY lease_expires_at LIMIT 100`,
    )) as Array<{ id: string }>;
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
