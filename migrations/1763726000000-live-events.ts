import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Live events: every instance publishes state changes here and every instance delivers them to its
 * WebSocket and SSE clients (NOTIFY on channel `live_events` says which company has new ones).
 * Ids increase per company in commit order: a per-company counter row is bumped in the same
 * single-statement transaction that inserts the events, so a client resuming after id N never
 * misses an event committed later with a smaller id. Kept for a retention window (pruned by time).
 */
export class LiveEvents1763726000000 implements MigrationInterface {
  name = 'LiveEvents1763726000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE live_event_counters (
        company_id uuid PRIMARY KEY,
        last_id bigint NOT NULL
      )`);
    await q.query(`
      CREATE TABLE live_events (
        company_id uuid NOT NULL,
        id bigint NOT NULL,
        type text NOT NULL,
        payload jsonb NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (company_id, id)
      )`);
    await q.query(`CREATE INDEX live_events_created_at_idx ON live_events USING brin (created_at)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE live_events`);
    await q.query(`DROP TABLE live_event_counters`);
  }
}
