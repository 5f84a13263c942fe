import { Injectable, Optional } from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { IntervalJob, JobInterval } from '../../common/jobs/interval-job';
import { AppConfig } from '../../config/app-config';
import { Db } from '../../database/db.service';
import { Clock } from '../budgets/clock.service';
import { countFirings, nextFiring } from './cron';
import { RoutineFiring } from './routine-firing.service';
import { DueTriggerRecord, RoutinesRepository } from './routines.repository';

const TICK = 'routines.tick';
const BATCH = 200;
/** firings in flight at once on one instance */
const PARALLEL = 4;
/** A firing later than this after its time counts as missed (catch-up policy skip_missed drops it). */
export const MISSED_GRACE_MS = 5 * 60_000;

export interface TickResult {
  claimed: number;
  failed: number;
}

/**
 * The routines scheduler. Each tick asks the database for triggers whose `next_run_at` has come
 * (an index probe: nothing else when idle), then claims each firing with a conditional UPDATE of
 * that time in its own transaction, so across instances a scheduled time yields one execution,
 * and one company's failure never stops the others. After downtime the missed firings of a
 * trigger are coalesced into one execution (`missedCount`), and `next_run_at` jumps to the first
 * firing after now.
 */
@Injectable()
export class RoutinesScheduler extends IntervalJob {
  constructor(
    private readonly db: Db,
    private readonly config: AppConfig,
    private readonly repo: RoutinesRepository,
    private readonly firing: RoutineFiring,
    private readonly clock: Clock,
    @Optional() registry?: SchedulerRegistry,
  ) {
    super('RoutinesScheduler', registry);
  }

  protected intervals(): JobInterval[] {
    return [{ name: TICK, everyMs: this.config.routinesTickMs, what: 'routines tick', run: () => this.tick() }];
  }

  /** Fires everything due now (in batches until none is left). */
  async tick(): Promise<TickResult> {
    const total: TickResult = { claimed: 0, failed: 0 };
    for (;;) {
      const due = await this.repo.dueTriggers(BATCH, this.clock.now());
      let progressed = 0;
      // a few firings at once: each is a short transaction bound by round trips, not CPU
      const queue = [...due];
      const worker = async () => {
        for (let t = queue.shift(); t && !this.stopped; t = queue.shift()) {
          const outcome = await this.fireOne(t);
          if (outcome !== 'lost') progressed++;
          if (outcome === 'claimed') total.claimed++;
          if (outcome === 'failed') total.failed++;
        }
      };
      await Promise.all(Array.from({ length: Math.min(PARALLEL, queue.length) }, worker));
      if (this.stopped || due.length < BATCH || progressed === 0) return total;
    }
  }

  private async fireOne(t: DueTriggerRecord): Promise<'claimed' | 'lost' | 'failed'> {
    const now = this.clock.now();
    let next: Date;
    let missed: number;
    try {
      next = nextFiring(t.cronExpression, t.timezone, now);
      missed = countFirings(t.cronExpression, t.timezone, t.nextRunAt, now);
    } catch (err) {
      // a schedule that no longer evaluates (e.g. a time zone the runtime dropped) stops firing
      this.logger.error(`routine trigger ${t.id}: ${(err as Error).message}; schedule disabled`);
      await this.db.transaction(() => this.repo.claim(t.companyId, t.id, t.nextRunAt, null, now)).catch(() => undefined);
      return 'failed';
    }
    const late = now.getTime() - t.nextRunAt.getTime() > MISSED_GRACE_MS;
    try {
      const claimed = await this.db.transaction(async () => {
        if (!(await this.repo.claim(t.companyId, t.id, t.nextRunAt, next, now))) return false;
        await this.firing.fire(t.companyId, t.routineId, {
          source: 'schedule',
          triggerId: t.id,
          scheduledFor: t.nextRunAt,
          missedCount: missed,
          skipReason:
            late && t.catchUpPolicy === 'skip_missed' ? 'missed while the service was down (catch-up policy skip_missed)' : undefined,
        });
        return true;
      });
      return claimed ? 'claimed' : 'lost';
    } catch (err) {
      // the firing rolled back: record the failure and move the schedule on, so one broken
      // routine neither blocks the others nor retries every tick
      this.logger.error(`routine ${t.routineId} (company ${t.companyId}) failed to fire: ${(err as Error).message}`);
      await this.db
        .transaction(async () => {
          if (!(await this.repo.claim(t.companyId, t.id, t.nextRunAt, next, now))) return;
          await this.repo.insertRun(t.companyId, {
            routineId: t.routineId,
            triggerId: t.id,
            source: 'schedule',
            status: 'failed',
            scheduledFor: t.nextRunAt,
            missedCount: missed,
            triggerPayload: null,
            linkedIssueId: null,
            coalescedIntoRunId: null,
            failureReason: (err as Error).message.slice(0, 500),
            createdByAgentId: null,
            createdByUserId: null,
          });
          await this.repo.setTriggerResult(t.companyId, t.id, 'failed');
        })
        .catch((e) => this.logger.error(`routine ${t.routineId}: could not record the failure: ${(e as Error).message}`));
      return 'failed';
    }
  }
}
