import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Trace context of wakes and runs (docs/tracing.md): the W3C traceparent of what caused a wake, and
 * that of the run's own trace (its `heartbeat.wake` root span). Null when tracing is off.
 */
export class TraceContext1763830000001 implements MigrationInterface {
  name = 'TraceContext1763830000001';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE agent_wakeup_requests ADD COLUMN trace_parent text`);
    await q.query(`ALTER TABLE heartbeat_runs ADD COLUMN trace_parent text`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE heartbeat_runs DROP COLUMN IF EXISTS trace_parent`);
    await q.query(`ALTER TABLE agent_wakeup_requests DROP COLUMN IF EXISTS trace_parent`);
  }
}
