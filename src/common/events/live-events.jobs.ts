import { Injectable, Logger, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import { AppConfig } from '../../config/app-config';
import { LiveEventsRepository } from './live-events.repository';

const PRUNE_EVERY_MS = 60_000;

/** Drops events past the retention window (idempotent: any instance may run it). */
@Injectable()
export class LiveEventsJobs implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger('LiveEvents');
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly repo: LiveEventsRepository,
    private readonly config: AppConfig,
  ) {}

  onModuleInit(): void {
    this.timer = setInterval(() => void this.prune(), PRUNE_EVERY_MS);
    this.timer.unref();
  }

  onModuleDestroy(): void {
    if (this.timer) clearInterval(this.timer);
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
