import { isoRequired } from '../../database/row-mapping';
import { Injectable } from '@nestjs/common';
import { Client, ClientConfig, Notification, Pool } from 'pg';
import { Db } from '../../database/db.service';
import type { LiveEvent, PendingLiveEvent } from './live-event.types';

export const LIVE_EVENTS_CHANNEL = 'live_events';

interface EventRow {
  company_id: string;
  id: string;
  type: string;
  payload: Record<string, unknown>;
  created_at: Date;
}

const toEvent = (r: EventRow): LiveEvent => ({
  id: Number(r.id),
  companyId: r.company_id,
  type: r.type,
  createdAt: isoRequired(r.created_at),
  payload: r.payload,
});

/** A dedicated connection that LISTENs (not from the pool: it stays open). */
export interface EventListener {
  listen(channel: string): Promise<void>;
  close(): Promise<void>;
}

const CHANNEL_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

/** The only place live_events and live_event_counters are read or written. */
@Injectable()
export class LiveEventsRepository {
  constructor(private readonly db: Db) {}

  /**
   * Stores a batch in one autocommit statement: each company's counter row is bumped by its
   * number of events (locked only while this statement runs, companies in a fixed order so two
   * instances never deadlock), the events get the ids in between in batch order, and one NOTIFY
   * per company (`<companyId>:<last id>`) is sent when the statement commits.
   */
  async insertBatch(events: PendingLiveEvent[]): Promise<void> {
    // events of companies nobody watches (see watch()) are dropped here, before any row is written
    await this.db.detached(() =>
      this.db.dataSource.query(
        `WITH input AS (
           SELECT t.* FROM unnest($1::uuid[], $2::text[], $3::jsonb[], $4::timestamptz[]) WITH ORDINALITY AS t(company_id, type, payload, created_at, ord)
            WHERE EXISTS (SELECT 1 FROM live_event_watch w WHERE w.company_id = t.company_id AND w.until > now())
         ), counts AS (
           SELECT company_id, count(*) AS n FROM input GROUP BY company_id
         ), bumped AS (
           INSERT INTO live_event_counters AS c (company_id, last_id)
           SELECT company_id, n FROM counts ORDER BY company_id
           ON CONFLICT (company_id) DO UPDATE SET last_id = c.last_id + EXCLUDED.last_id
           RETURNING company_id, last_id
         ), inserted AS (
           INSERT INTO live_events (company_id, id, type, payload, created_at)
           SELECT i.company_id, b.last_id - k.n + row_number() OVER (PARTITION BY i.company_id ORDER BY i.ord), i.type, i.payload, i.created_at
             FROM input i JOIN bumped b USING (company_id) JOIN counts k USING (company_id)
           RETURNING company_id, id
         )
         SELECT pg_notify('${LIVE_EVENTS_CHANNEL}', company_id || ':' || max(id)) FROM inserted GROUP BY company_id`,
        [
          events.map((e) => e.companyId),
          events.map((e) => e.type),
          events.map((e) => JSON.stringify(e.payload)),
          events.map((e) => e.createdAt),
        ],
      ),
    );
  }

  /**
   * Opens a connection with the pool's settings that LISTENs on `channels`; `onLost` is called once
   * when it breaks (the caller reconnects).
   */
  async openListener(
    name: string,
    channels: string[],
    onNotify: (n: Notification) => void,
    onLost: (err?: Error) => void,
  ): Promise<EventListener> {
    const pool = (this.db.dataSource.driver as unknown as { master: Pool & { options: ClientConfig } }).master;
    const client = new Client({ ...pool.options, application_name: name.slice(0, 63) });
    let lost = false;
    const lose = (err?: Error) => {
      if (lost) return;
      lost = true;
      client.end().catch(() => undefined);
      onLost(err);
    };
    client.on('notification', onNotify);
    client.on('error', (err) => lose(err));
    client.on('end', () => lose());
    const listen = async (channel: string) => {
      if (!CHANNEL_NAME.test(channel)) throw new Error(`bad channel name ${channel}`);
      await client.query(`LISTEN ${channel}`);
    };
    await client.connect();
    for (const channel of channels) await listen(channel);
    return {
      listen,
      close: async () => {
        lost = true;
        await client.end().catch(() => undefined);
      },
    };
  }

  /** NOTIFY on `channel`; inside a transaction it is delivered when the transaction commits. */
  async notify(channel: string, payload: string): Promise<void> {
    await this.db.query(`SELECT pg_notify($1, $2)`, [channel, payload]);
  }

  /**
   * Ids of every company that is not archived: instance-level events (a plugin worker crashed) go to
   * each company's stream. A read of the companies table outside its module, kept to this one line.
   */
  async activeCompanyIds(): Promise<string[]> {
    const rows = (await this.db.dataSource.query(`SELECT id FROM companies WHERE status <> 'archived'`)) as Array<{ id: string }>;
    return rows.map((r) => r.id);
  }

  /**
   * Marks companies as watched for `seconds` (a subscriber is connected; refreshed while it stays).
   * Committed before the subscriber reads its start position, so every event stored after it counts.
   */
  async watch(companyIds: string[], seconds: number): Promise<void> {
    if (companyIds.length === 0) return;
    await this.db.detached(() =>
      this.db.dataSource.query(
        `INSERT INTO live_event_watch (company_id, until)
         SELECT c, now() + make_interval(secs => $2) FROM unnest($1::uuid[]) AS c ORDER BY c
         ON CONFLICT (company_id) DO UPDATE SET until = GREATEST(live_event_watch.until, EXCLUDED.until)`,
        [companyIds, seconds],
      ),
    );
  }

  /** Events of a company after `afterId`, oldest first. */
  async after(companyId: string, afterId: number, limit: number): Promise<LiveEvent[]> {
    const rows: EventRow[] = await this.db.dataSource.query(
      `SELECT company_id, id, type, payload, created_at FROM live_events WHERE company_id = $1 AND id > $2 ORDER BY id LIMIT $3`,
      [companyId, afterId, limit],
    );
    return rows.map(toEvent);
  }

  /** The id of the company's newest event (0 before its first). */
  async lastId(companyId: string): Promise<number> {
    const [row] = (await this.db.dataSource.query(`SELECT last_id FROM live_event_counters WHERE company_id = $1`, [companyId])) as {
      last_id: string;
    }[];
    return row ? Number(row.last_id) : 0;
  }

  /** Drops events older than the retention window; returns how many. */
  async prune(olderThanSec: number): Promise<number> {
    const res = (await this.db.dataSource.query(
      `WITH gone AS (DELETE FROM live_events WHERE created_at < now() - make_interval(secs => $1) RETURNING 1),
            unwatched AS (DELETE FROM live_event_watch WHERE until < now() - interval '1 hour')
       SELECT count(*)::int AS n FROM gone`,
      [olderThanSec],
    )) as { n: number }[];
    return res[0]?.n ?? 0;
  }
}
