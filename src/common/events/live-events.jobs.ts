import { Injectable, Optional } from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { AppConfig } from '../../config/app-config';
import { IntervalJob, JobInterval } from '../jobs/interval-job';
import { LiveEventsRepository } from './live-events.repository';

const PRUNE_EVERY_MS = 60_000;

/** Drops events past the retention window (idempotent: any instance may run it). */
@Injectable()
export class LiveEventsJobs extends IntervalJob {
  constructor(
    private readonly repo: LiveEventsRepository,
    private readonly config: AppConfig,
    @Optional() registry?: SchedulerRegistry,
  ) {
    super('LiveEvents', registry);
  }

  protected intervals(): JobInterval[] {
    return [{ name: 'live-events.prune', everyMs: PRUNE_EVERY_MS, what: 'pruning live events', run: () => this.prune() }];
  }

  async prune(): Promise<number> {
    try {
      return await this.repo.prune(this.config.events.retentionSec);
    } catch (err) {
      this.logger.warn(`pruning live events failed: ${(err as Error).message}`);
      return 0;
    }
  }
}
