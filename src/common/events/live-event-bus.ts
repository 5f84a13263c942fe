import { Injectable, Logger, OnModuleDestroy } from '@nestjs/common';
import { Db } from '../../database/db.service';
import type { LiveEventType, PendingLiveEvent } from './live-event.types';
import { LiveEventsRepository } from './live-events.repository';

/** Events of one flush (one statement). */
const MAX_BATCH = 500;
/** Events waiting for the database beyond this are dropped (oldest first): a live stream never grows memory without bound. */
const MAX_PENDING = 20_000;
/** How long the first event of a batch waits for others (one statement per few milliseconds under load). */
const FLUSH_DELAY_MS = 3;

/**
 * Publishes live events through PostgreSQL so that every instance can deliver them. A publish
 * inside a transaction is sent once it commits (a rolled-back change publishes nothing). Events
 * are written in batches by one flush at a time, so the events of this instance keep their order.
 */
@Injectable()
export class LiveEventBus implements OnModuleDestroy {
  private readonly logger = new Logger('LiveEvents');
  private pending: PendingLiveEvent[] = [];
  private timer: NodeJS.Timeout | null = null;
  private flushing: Promise<void> | null = null;
  private dropped = 0;

  constructor(
    private readonly db: Db,
    private readonly repo: LiveEventsRepository,
  ) {}

  /**
   * `lead`: the event of the change the transaction was made for (a route's own activity record):
   * it goes out before the events of what that change caused (the wake of an assigned issue).
   */
  publish(companyId: string, type: LiveEventType, payload: Record<string, unknown>, opts: { lead?: boolean } = {}): void {
    if (this.db.inTransaction)
      this.db.afterCommit(() => this.enqueue({ companyId, type, payload, createdAt: new Date() }), { first: opts.lead === true });
    else this.enqueue({ companyId, type, payload, createdAt: new Date() });
  }

  /** An instance-level event (e.g. a plugin worker crashed) on the stream of every active company. */
  async publishToEveryCompany(type: LiveEventType, payload: Record<string, unknown>): Promise<void> {
    for (const companyId of await this.db.detached(() => this.repo.activeCompanyIds()))
      this.enqueue({ companyId, type, payload, createdAt: new Date() });
  }

  /**
   * A signal to every instance (no stored event), e.g. "a run was queued": sent with the current
   * transaction's COMMIT (nothing when it rolls back). Listen with LiveEventHub.onNotification.
   */
  async signal(channel: string, payload = ''): Promise<void> {
    await this.db.sendWithCommit(() => this.repo.notify(channel, payload));
  }

  /** Resolves once everything published so far is stored (and notified). */
  async flush(): Promise<void> {
    while (this.pending.length > 0 || this.flushing) {
      if (this.flushing) await this.flushing;
      else await this.runFlush();
    }
  }

  async onModuleDestroy(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.flush().catch(() => undefined);
  }

  private enqueue(e: PendingLiveEvent): void {
    this.pending.push(e);
    if (this.pending.length > MAX_PENDING) {
      this.pending.splice(0, this.pending.length - MAX_PENDING);
      if (this.dropped++ % 1000 === 0)
        this.logger.warn('live events are published faster than the database takes them; the oldest are dropped');
    }
    if (!this.timer && !this.flushing) {
      this.timer = setTimeout(() => void this.runFlush(), FLUSH_DELAY_MS);
      this.timer.unref();
    }
  }

  private runFlush(): Promise<void> {
    this.timer = null;
    if (this.flushing) return this.flushing;
    this.flushing = (async () => {
      while (this.pending.length > 0) {
        const batch = this.pending.splice(0, MAX_BATCH);
        await this.store(batch);
      }
    })().finally(() => {
      this.flushing = null;
    });
    return this.flushing;
  }

  private async store(batch: PendingLiveEvent[]): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        await this.repo.insertBatch(batch);
        return;
      } catch (err) {
        // events published while the service shuts down (runs it ends) find the database closed: nothing to report
        if (/not connected|pool.*(ended|closed)|after calling end/i.test((err as Error).message)) return;
        // a deadlock or a lost connection is retried once; then the batch is dropped (best effort), not the service
        if (attempt >= 2) {
          this.logger.error(`could not publish ${batch.length} live events: ${(err as Error).message}`);
          return;
        }
        await new Promise((r) => setTimeout(r, 50));
      }
    }
  }
}

export type { LiveEventType };
