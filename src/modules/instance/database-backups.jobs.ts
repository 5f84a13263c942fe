import { Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown, Optional } from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { AppConfig } from '../../config/app-config';
import { DatabaseBackupsService } from './database-backups.service';

const TICK = 'database-backups.tick';

/** Scheduled backups: each tick tries to claim the due backup (one instance wins it). */
@Injectable()
export class DatabaseBackupsScheduler implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('DatabaseBackupsScheduler');
  private busy = false;
  private stopped = false;

  constructor(
    private readonly config: AppConfig,
    private readonly backups: DatabaseBackupsService,
    @Optional() private readonly registry?: SchedulerRegistry,
  ) {}

  onApplicationBootstrap(): void {
    if (!this.registry) return;
    this.registry.addInterval(
      TICK,
      setInterval(() => void this.tick(), this.config.backups.tickMs),
    );
  }

  onApplicationShutdown(): void {
    this.stopped = true;
    try {
      this.registry?.deleteInterval(TICK);
    } catch {
      /* not registered */
    }
  }

  async tick(): Promise<void> {
    if (this.busy || this.stopped) return;
    this.busy = true;
    try {
      const made = await this.backups.runScheduled();
      if (made) this.logger.log(`scheduled backup ${made.fileName} (${made.engine}, ${made.sizeBytes} bytes, ${made.durationMs} ms)`);
    } catch (err) {
      this.logger.error(`scheduled backup failed: ${(err as Error).message}`);
    } finally {
      this.busy = false;
    }
  }
}
