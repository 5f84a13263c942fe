import { Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown, Optional } from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { AppConfig } from '../../config/app-config';
import { ActivityChainRepository } from './activity-chain.repository';
import { ActivityChainService } from './activity-chain.service';

const TICK = 'activity-anchors.tick';

/**
 * Periodic anchors: each tick tries to claim the anchoring round (one schedule row, so one instance
 * wins it per interval), then signs every company chain head that moved since its last anchor.
 */
@Injectable()
export class ActivityAnchorsScheduler implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('ActivityAnchors');
  private busy = false;
  private stopped = false;

  constructor(
    private readonly config: AppConfig,
    private readonly chain: ActivityChainService,
    private readonly repo: ActivityChainRepository,
    @Optional() private readonly registry?: SchedulerRegistry,
  ) {}

  onApplicationBootstrap(): void {
    if (!this.registry) return;
    const tickMs = Math.min(this.config.audit.anchorIntervalSec * 1000, 30_000);
    this.registry.addInterval(
      TICK,
      setInterval(() => void this.tick(), tickMs),
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
      if (!(await this.repo.claimAnchorRound(this.config.heartbeat.instanceId, this.config.audit.anchorIntervalSec))) return;
      const made = await this.chain.anchorAll();
      if (made) this.logger.log(`anchored ${made} activity chain head(s)`);
    } catch (err) {
      this.logger.error(`activity anchoring failed: ${(err as Error).message}`);
    } finally {
      this.busy = false;
    }
  }
}
