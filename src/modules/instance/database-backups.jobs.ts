import { Injectable, Optional } from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { IntervalJob, JobInterval } from '../../common/jobs/interval-job';
import { AppConfig } from '../../config/app-config';
import { DatabaseBackupsService } from './database-backups.service';

const TICK = 'database-backups.tick';

/** Scheduled backups: each tick tries to claim the due backup (one instance wins it). */
@Injectable()
export class DatabaseBackupsScheduler extends IntervalJob {
  constructor(
    private readonly config: AppConfig,
    private readonly backups: DatabaseBackupsService,
    @Optional() registry?: SchedulerRegistry,
  ) {
    super('DatabaseBackupsScheduler', registry);
  }

  protected intervals(): JobInterval[] {
    return [{ name: TICK, everyMs: this.config.backups.tickMs, what: 'scheduled backup', run: () => this.backupIfDue() }];
  }

  /** One tick, as the timer runs it. */
  tick(): Promise<void> {
    return this.guarded(this.intervals()[0]);
  }

  private async backupIfDue(): Promise<void> {
    const made = await this.backups.runScheduled();
    if (made) this.logger.log(`scheduled backup ${made.fileName} (${made.engine}, ${made.sizeBytes} bytes, ${made.durationMs} ms)`);
  }
}
