import { isoRequired, recordColumns } from '../../database/row-mapping';
import { Injectable } from '@nestjs/common';
import { CompanyScopedRepository } from '../../database/company-scoped.repository';
import { Db } from '../../database/db.service';
import type { LiveEvent, PendingLiveEvent } from './live-event.types';

export const LIVE_EVENTS_CHANNEL = 'live_events';

/** An event as selected: its id (bigint) as text, its time as a Date. */
type StoredEvent = Omit<LiveEvent, 'id' | 'createdAt'> & { id: string; createdAt: Date };

const EVENT_COLUMNS = recordColumns('company_id, id, type, payload, created_at');

/** The event as it leaves (in this field order): its id as a number, its time in ISO 8601. */
const toEvent = (r: StoredEvent): LiveEvent => ({
  id: Number(r.id),
  companyId: r.companyId,
  type: r.type,
  createdAt: isoRequired(r.createdAt),
  payload: r.payload,
});

const DETACHED = { detached: true };

/**
 * The only place live_events, live_event_counters and live_event_watch are read or written. Its
 * statements run outside any request transaction (autocommit), so that events and marks never
 * wait for nor roll back with a request.
 */
@Injectable()
export class LiveEventsRepository extends CompanyScopedRepository {
  constructor(db: Db) {
    super(db);
  }

  /**
   * Stores a batch in one autocommit statement: each company's counter row is bumped by its
   * number of events (locked only while this statement runs, companies in a fixed order so two
   * instances never deadlock), the events get the ids in between in batch order, and one NOTIFY
   * per company (`<companyId>:<last id>`) is sent when the statement commits.
   */
  async insertBatch(events: PendingLiveEvent[]): Promise<void> {
    // events of companies nobody watches (see watch()) are dropped here, before any row is written
    await this.unscoped(
      'a batch of events of several companies, each row naming its own company',
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
      DETACHED,
    );
  }

  /** NOTIFY on `channel`; inside a transaction it is delivered when the transaction commits. */
  async notify(channel: string, payload: string): Promise<void> {
    await this.unscoped('a NOTIFY (no table)', `SELECT pg_notify($1, $2)`, [channel, payload]);
  }

  /**
   * Ids of every company that is not archived: instance-level events (a plugin worker crashed) go to
   * each company's stream. A read of the companies table outside its module (FOREIGN_READS), kept to this one line.
   */
  async activeCompanyIds(): Promise<string[]> {
    const rows = await this.unscoped<{ id: string }>(
      'an instance-level event goes to every company that is not archived',
      `SELECT id FROM companies WHERE status <> 'archived'`,
      [],
      DETACHED,
    );
    return rows.map((r) => r.id);
  }

  /**
   * Marks companies as watched for `seconds` (a subscriber is connected; refreshed while it stays).
   * Committed before the subscriber reads its start position, so every event stored after it counts.
   */
  async watch(companyIds: string[], seconds: number): Promise<void> {
    if (companyIds.length === 0) return;
    await this.unscoped(
      'the watch marks of the companies a subscriber follows, several at once',
      `INSERT INTO live_event_watch (company_id, until)
         SELECT c, now() + make_interval(secs => $2) FROM unnest($1::uuid[]) AS c ORDER BY c
         ON CONFLICT (company_id) DO UPDATE SET until = GREATEST(live_event_watch.until, EXCLUDED.until)`,
      [companyIds, seconds],
      DETACHED,
    );
  }

  /** Events of a company after `afterId`, oldest first. */
  async after(companyId: string, afterId: number, limit: number): Promise<LiveEvent[]> {
    const rows = await this.rows<StoredEvent>(
      companyId,
      `SELECT ${EVENT_COLUMNS} FROM live_events WHERE company_id = $1 AND id > $2 ORDER BY id LIMIT $3`,
      [afterId, limit],
      DETACHED,
    );
    return rows.map(toEvent);
  }

  /** The id of the company's newest event (0 before its first). */
  async lastId(companyId: string): Promise<number> {
    const row = await this.row<{ lastId: string }>(
      companyId,
      `SELECT last_id AS "lastId" FROM live_event_counters WHERE company_id = $1`,
      [],
      DETACHED,
    );
    return row ? Number(row.lastId) : 0;
  }

  /** Drops events older than the retention window; returns how many. */
  async prune(olderThanSec: number): Promise<number> {
    const res = await this.unscoped<{ n: number }>(
      'the retention sweep of every company (one instance-wide job)',
      `WITH gone AS (DELETE FROM live_events WHERE created_at < now() - make_interval(secs => $1) RETURNING 1),
            unwatched AS (DELETE FROM live_event_watch WHERE until < now() - interval '1 hour')
       SELECT count(*)::int AS n FROM gone`,
      [olderThanSec],
      DETACHED,
    );
    return res[0]?.n ?? 0;
  }
}
