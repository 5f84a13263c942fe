import { Injectable, Optional } from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { IntervalJob, JobInterval } from '../../common/jobs/interval-job';
import { AppConfig } from '../../config/app-config';
import { ActivityChainRepository } from './activity-chain.repository';
import { ActivityChainService } from './activity-chain.service';

const TICK = 'activity-anchors.tick';

/**
 * Periodic anchors: each tick tries to claim the anchoring round (one schedule row, so one instance
 * wins it per interval), then signs every company chain head that moved since its last anchor.
 */
@Injectable()
export class ActivityAnchorsScheduler extends IntervalJob {
  constructor(
    private readonly config: AppConfig,
    private readonly chain: ActivityChainService,
    private readonly repo: ActivityChainRepository,
    @Optional() registry?: SchedulerRegistry,
  ) {
    super('ActivityAnchors', registry);
  }

  protected intervals(): JobInterval[] {
    const everyMs = Math.min(this.config.audit.anchorIntervalSec * 1000, 30_000);
    return [{ name: TICK, everyMs, what: 'activity anchoring', run: () => this.anchorRound() }];
  }

  /** One tick, as the timer runs it. */
  tick(): Promise<void> {
    return this.guarded(this.intervals()[0]);
  }

  private async anchorRound(): Promise<void> {
    if (!(await this.repo.claimAnchorRound(this.config.heartbeat.instanceId, this.config.audit.anchorIntervalSec))) return;
    const made = await this.chain.anchorAll();
    if (made) this.logger.log(`anchored ${made} activity chain head(s)`);
  }
}
