import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `cost_events.priced_cents`: the cost of a run's usage in cents with sub-cent precision, as the
 * runtime priced (or its CLI reported) it. A run's booked `cost_cents` is whole cents; the
 * remainder is carried forward per agent and UTC day (each event books the whole cents the day's
 * priced total has reached, less what the day booked before), so that booked cents stay within one
 * cent of the priced total. Null for events reported with whole cents (by agents, adapters).
 */
export class CostPricedCents1763843043000 implements MigrationInterface {
  name = 'CostPricedCents1763843043000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE cost_events ADD COLUMN priced_cents numeric(20,6) CHECK (priced_cents >= 0)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE cost_events DROP COLUMN IF EXISTS priced_cents`);
  }
}
