import { Injectable, Optional } from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { IntervalJob, JobInterval } from '../../common/jobs/interval-job';
import { CronExpressionParser } from 'cron-parser';
import { AppConfig } from '../../config/app-config';
import { Db } from '../../database/db.service';
import { PluginSupervisor } from './plugin-supervisor.service';
import { PluginRecord, PluginsRepository } from './plugins.repository';
import { PluginCallsService } from './plugin-calls.service';
import { PluginCore } from './plugin-core.service';
import { PluginCompanyRepository } from './plugin-company.repository';

const TICK = 'plugins.tick';
/** an occurrence later than this is not run any more (the service was down) */
const MISSED_GRACE_MS = 5 * 60_000;
const EVENT_BATCH = 50;
const STREAMS_PER_TICK = 20;
const PRUNE_EVERY_MS = 10 * 60_000;
const KEEP_DELIVERED_MS = 24 * 3600_000;

/**
 * Scheduled plugin work of this instance, each tick:
 * - cron jobs: the latest occurrence of each job of each enabled plugin is claimed by inserting
 *   its run (unique per plugin, job and occurrence), so it runs once across all instances;
 * - events: pending outbox events are delivered per (plugin, company) under a transaction-scoped
 *   advisory lock, in id order, marked delivered in the same transaction (at least once, in order);
 * - reconcile: workers of plugins disabled or uninstalled elsewhere are stopped here.
 * One plugin's failure never stops the others.
 */
@Injectable()
export class PluginsScheduler extends IntervalJob {
  private lastPrune = 0;

  constructor(
    private readonly db: Db,
    private readonly config: AppConfig,
    private readonly repo: PluginsRepository,
    private readonly calls: PluginCallsService,
    private readonly core: PluginCore,
    private readonly outbox: PluginCompanyRepository,
    private readonly supervisor: PluginSupervisor,
    @Optional() registry?: SchedulerRegistry,
  ) {
    super('PluginsScheduler', registry);
  }

  protected intervals(): JobInterval[] {
    return [{ name: TICK, everyMs: this.config.plugins.tickMs, what: 'plugins tick', run: () => this.tick() }];
  }

  async tick(now = new Date()): Promise<{ jobsRun: number; eventsDelivered: number }> {
    const enabled = await this.repo.listEnabled();
    const ids = new Set(enabled.map((p) => p.id));
    for (const id of this.supervisor.runningIds()) if (!ids.has(id)) await this.supervisor.stop(id);
    let jobsRun = 0;
    for (const p of enabled) {
      if (this.stopped) break;
      jobsRun += await this.fireJobs(p, now).catch((err) => {
        this.logger.error(`plugin ${p.pluginKey}: jobs failed: ${(err as Error).message}`);
        return 0;
      });
    }
    const eventsDelivered = await this.deliverEvents();
    if (Date.now() - this.lastPrune > PRUNE_EVERY_MS) {
      this.lastPrune = Date.now();
      await this.outbox.pruneDelivered(new Date(Date.now() - KEEP_DELIVERED_MS)).catch(() => undefined);
    }
    return { jobsRun, eventsDelivered };
  }

  private async fireJobs(p: PluginRecord, now: Date): Promise<number> {
    let n = 0;
    for (const job of p.manifest.jobs) {
      let occurrence: Date;
      try {
        occurrence = CronExpressionParser.parse(job.schedule, { tz: job.timezone ?? 'UTC', currentDate: new Date(now.getTime() + 1) })
          .prev()
          .toDate();
      } catch {
        continue;
      }
      if (p.enabledAt && occurrence.getTime() < new Date(p.enabledAt).getTime()) continue;
      if (now.getTime() - occurrence.getTime() > MISSED_GRACE_MS) continue;
      const run = await this.repo.claimOccurrence(p.id, job.key, occurrence, this.config.instanceId);
      if (!run) continue;
      n++;
      await this.calls.runJob(p, run);
    }
    return n;
  }

  /** Delivers pending events; returns how many were delivered. */
  async deliverEvents(): Promise<number> {
    let delivered = 0;
    const streams = await this.outbox.pendingStreams(STREAMS_PER_TICK);
    for (const s of streams) {
      if (this.stopped) break;
      try {
        delivered += await this.db.transaction(async () => {
          if (!(await this.outbox.lockStream(s.pluginId, s.companyId))) return 0;
          const plugin = await this.repo.find(s.pluginId);
          if (!plugin || plugin.status !== 'enabled') return 0;
          let n = 0;
          for (const e of await this.outbox.pendingEvents(s.pluginId, s.companyId, EVENT_BATCH)) {
            try {
              await this.core.callWorker(plugin, 'events.deliver', { event: { ...e.payload, outboxId: e.id } }, 10_000, s.companyId);
            } catch (err) {
              await this.outbox.markFailed(e.companyId, e.id, (err as Error).message);
              break; // later events of this company wait: order is kept
            }
            await this.outbox.markDelivered(e.companyId, e.id);
            n++;
          }
          return n;
        });
      } catch (err) {
        this.logger.error(`plugin events (${s.pluginId}, company ${s.companyId}): ${(err as Error).message}`);
      }
    }
    return delivered;
  }
}
