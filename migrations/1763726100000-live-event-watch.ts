import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Companies someone watches: while a WebSocket/SSE client of any instance is subscribed (and for a
 * grace period after, so that a reconnect resumes), the company's live events are stored; the
 * events of a company nobody watches are not written at all.
 */
export class LiveEventWatch1763726100000 implements MigrationInterface {
  name = 'LiveEventWatch1763726100000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE live_event_watch (company_id uuid PRIMARY KEY, until timestamptz NOT NULL)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE live_event_watch`);
  }
}
