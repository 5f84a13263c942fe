import { Injectable, Logger, OnModuleDestroy, Optional } from '@nestjs/common';
import type { Notification } from 'pg';
import { AppConfig } from '../../config/app-config';
import type { Actor } from '../auth/actor';
import { HiddenIssues } from './hidden-issues.port';
import type { LiveEvent } from './live-event.types';
import { EventListener, LiveEventsListenerFactory } from './live-events-listener';
import { LIVE_EVENTS_CHANNEL, LiveEventsRepository } from './live-events.repository';

const PAGE = 500;
/**
 * A company stays watched this long after its last subscriber here (refreshed while one is
 * connected): its events are stored, so a client that reconnects within it resumes without a gap.
 */
const WATCH_SEC = 300;
const WATCH_REFRESH_MS = 60_000;

/** Where a subscription's events go (a WebSocket or an SSE response). */
export interface LiveEventSink {
  /** writes the events in order; false when the client fell too far behind (the sink closes it) */
  send(events: LiveEvent[]): boolean;
  close(code: number, reason: string): void;
}

export interface LiveSubscription {
  readonly companyId: string;
  readonly actor: Actor;
  /** the id of the last event delivered */
  cursor: number;
  unsubscribe(): void;
}

interface Subscriber extends LiveSubscription {
  sink: LiveEventSink;
  /** false while catching up from the table (live batches are then skipped: the catch-up reads them) */
  live: boolean;
  closed: boolean;
}

interface CompanyFeed {
  companyId: string;
  /** every event up to this id has been read and handed to the live subscribers */
  fetched: number;
  subs: Set<Subscriber>;
  pulling: Promise<void> | null;
  again: boolean;
}

/** The issue an event is about, if any (hidden issues are filtered as in the activity feed). */
export function eventIssueId(e: LiveEvent): string | undefined {
  const p = e.payload;
  if (typeof p.issueId === 'string') return p.issueId;
  if (p.entityType === 'issue' && typeof p.entityId === 'string') return p.entityId;
  const details = p.details as Record<string, unknown> | null | undefined;
  if (details && typeof details.issueId === 'string') return details.issueId;
  return undefined;
}

/**
 * Delivers live events to this instance's subscribers. One dedicated connection LISTENs on the
 * events channel (opened with the first subscriber); a notification makes the hub read the
 * company's new events once and hand them to every subscriber of that company. A subscriber that
 * resumes from an older id first reads the table itself, then joins the live feed without a gap.
 */
@Injectable()
export class LiveEventHub implements OnModuleDestroy {
  private readonly logger = new Logger('LiveEvents');
  private readonly feeds = new Map<string, CompanyFeed>();
  private listener: EventListener | null = null;
  private connecting: Promise<void> | null = null;
  private reconnectDelay = 500;
  private stopped = false;
  private readonly notifyListeners = new Map<string, Array<(payload: string) => void>>();
  private watchTimer: NodeJS.Timeout | null = null;

  constructor(
    private readonly repo: LiveEventsRepository,
    private readonly config: AppConfig,
    private readonly listeners: LiveEventsListenerFactory,
    @Optional() private readonly hiddenIssues: HiddenIssues = new HiddenIssues(),
  ) {}

  /** Other listeners on the hub's connection (e.g. the heartbeat engine's wake signal). */
  onNotification(channel: string, fn: (payload: string) => void): void {
    const list = this.notifyListeners.get(channel) ?? [];
    list.push(fn);
    this.notifyListeners.set(channel, list);
    if (this.listener) void this.listener.listen(channel).catch(() => undefined);
  }

  /** Starts listening (idempotent); the service calls it at start so that notifications reach other listeners too. */
  start(): Promise<void> {
    return this.ensureListening();
  }

  /**
   * The id of the company's newest event this instance knows of: where a new subscription starts.
   * The company is marked watched first, so that every event after this position is stored.
   */
  async position(companyId: string): Promise<number> {
    await this.ensureListening();
    await this.repo.watch([companyId], WATCH_SEC);
    return this.feeds.get(companyId)?.fetched ?? (await this.repo.lastId(companyId));
  }

  /**
   * Subscribes `sink` to the company's events after `after` (default: from now on). The caller has
   * checked the actor's access to the company.
   */
  async subscribe(companyId: string, actor: Actor, sink: LiveEventSink, after?: number): Promise<LiveSubscription> {
    await this.ensureListening();
    await this.repo.watch([companyId], WATCH_SEC);
    this.watchTimer ??= setInterval(() => void this.repo.watch([...this.feeds.keys()], WATCH_SEC).catch(() => undefined), WATCH_REFRESH_MS);
    this.watchTimer.unref();
    let feed = this.feeds.get(companyId);
    if (!feed) {
      feed = { companyId, fetched: await this.repo.lastId(companyId), subs: new Set(), pulling: null, again: false };
      // another subscriber may have created it meanwhile
      feed = this.feeds.get(companyId) ?? feed;
      this.feeds.set(companyId, feed);
      void this.pull(feed);
    }
    const f = feed;
    const start = after === undefined ? f.fetched : Math.max(0, Math.min(after, f.fetched));
    const sub: Subscriber = {
      companyId,
      actor,
      cursor: start,
      sink,
      live: start >= f.fetched,
      closed: false,
      unsubscribe: () => {
        sub.closed = true;
        f.subs.delete(sub);
        if (f.subs.size === 0 && this.feeds.get(companyId) === f) this.feeds.delete(companyId);
      },
    };
    f.subs.add(sub);
    if (!sub.live) void this.catchUp(f, sub);
    return sub;
  }

  async onModuleDestroy(): Promise<void> {
    this.stopped = true;
    if (this.watchTimer) clearInterval(this.watchTimer);
    // a connection being opened (start() at boot) is closed by connect() itself once it is open
    await this.connecting?.catch(() => undefined);
    for (const feed of this.feeds.values()) for (const s of [...feed.subs]) s.sink.close(1001, 'service shutting down');
    this.feeds.clear();
    const l = this.listener;
    this.listener = null;
    await l?.close();
  }

  /** Number of subscribers on this instance (metrics, tests). */
  get subscriberCount(): number {
    let n = 0;
    for (const f of this.feeds.values()) n += f.subs.size;
    return n;
  }

  private ensureListening(): Promise<void> {
    if (this.listener) return Promise.resolve();
    this.connecting ??= this.connect().finally(() => {
      this.connecting = null;
    });
    return this.connecting;
  }

  private async connect(): Promise<void> {
    let listener: EventListener | undefined = undefined;
    listener = await this.listeners.openListener(
      `${this.config.heartbeat.instanceId}-events`,
      [LIVE_EVENTS_CHANNEL, ...this.notifyListeners.keys()],
      (n) => this.onNotify(n),
      (err) => listener && this.lost(listener, err),
    );
    if (this.stopped) {
      // opened while the service shut down: not kept (it would hold the process open)
      await listener.close();
      return;
    }
    this.listener = listener;
    this.reconnectDelay = 500;
  }

  /** The listening connection broke: reconnect with backoff, then catch every feed up (nothing is missed). */
  private lost(listener: EventListener, err?: Error): void {
    if (this.listener !== listener || this.stopped) return;
    this.listener = null;
    this.logger.warn(`live event listener lost${err ? `: ${err.message}` : ''}; reconnecting`);
    const retry = () => {
      if (this.stopped) return;
      this.ensureListening()
        .then(() => {
          for (const feed of this.feeds.values()) void this.pull(feed);
          for (const fns of this.notifyListeners.values()) for (const fn of fns) fn('');
        })
        .catch(() => {
          this.reconnectDelay = Math.min(this.reconnectDelay * 2, 10_000);
          setTimeout(retry, this.reconnectDelay).unref();
        });
    };
    setTimeout(retry, this.reconnectDelay).unref();
  }

  private onNotify(n: Notification): void {
    if (n.channel !== LIVE_EVENTS_CHANNEL) {
      for (const fn of this.notifyListeners.get(n.channel) ?? []) fn(n.payload ?? '');
      return;
    }
    const [companyId, last] = (n.payload ?? '').split(':');
    const feed = this.feeds.get(companyId);
    if (feed && Number(last) > feed.fetched) void this.pull(feed);
  }

  /** Reads the company's new events (one reader at a time) and hands them to its live subscribers. */
  private pull(feed: CompanyFeed): Promise<void> {
    if (feed.pulling) {
      feed.again = true;
      return feed.pulling;
    }
    feed.pulling = (async () => {
      do {
        feed.again = false;
        for (;;) {
          const events = await this.repo.after(feed.companyId, feed.fetched, PAGE);
          if (events.length === 0) break;
          const visible = await this.visible(feed.companyId, events);
          feed.fetched = events[events.length - 1].id;
          for (const sub of feed.subs) if (sub.live) this.deliver(sub, visible, feed.fetched);
          if (events.length < PAGE) break;
        }
      } while (feed.again);
    })()
      .catch((err) => this.logger.error(`reading live events of company ${feed.companyId} failed: ${(err as Error).message}`))
      .finally(() => {
        feed.pulling = null;
      });
    return feed.pulling;
  }

  /** A resuming subscriber reads from the table until it reaches what the feed has delivered. */
  private async catchUp(feed: CompanyFeed, sub: Subscriber): Promise<void> {
    try {
      for (;;) {
        if (sub.closed) return;
        const known = feed.fetched;
        const events = await this.repo.after(feed.companyId, sub.cursor, PAGE);
        if (sub.closed) return;
        // events the feed had read before this query but the table no longer holds were pruned
        if (events.length === 0) sub.cursor = Math.max(sub.cursor, known);
        if (events.length > 0) {
          const upTo = events[events.length - 1].id;
          if (!this.deliver(sub, await this.visible(feed.companyId, events), upTo)) return;
        }
        // no await between this check and going live: the feed cannot deliver in between
        if (events.length < PAGE && sub.cursor >= feed.fetched) {
          sub.live = true;
          return;
        }
      }
    } catch (err) {
      this.logger.error(`catching up live events failed: ${(err as Error).message}`);
      sub.sink.close(1011, 'could not read the event history');
    }
  }

  private deliver(sub: Subscriber, events: LiveEvent[], upTo: number): boolean {
    if (sub.closed) return false;
    const fresh = events.filter((e) => e.id > sub.cursor);
    sub.cursor = Math.max(sub.cursor, upTo);
    if (fresh.length === 0) return true;
    const ok = sub.sink.send(fresh);
    if (!ok) sub.unsubscribe();
    return ok;
  }

  private async visible(companyId: string, events: LiveEvent[]): Promise<LiveEvent[]> {
    const issueIds = [...new Set(events.map(eventIssueId).filter((id): id is string => id !== undefined))];
    if (issueIds.length === 0) return events;
    const hidden = await this.hiddenIssues.among(companyId, issueIds);
    return hidden.size === 0 ? events : events.filter((e) => !hidden.has(eventIssueId(e) ?? ''));
  }
}
