import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The board's run views: the dashboard's 14-day run activity is an index-only scan of
 * (company, created_at) carrying status and error code; live runs of a company come from a small
 * partial index; the failed-runs badge reads failed runs by finish time; the agent-action audit
 * reads agent activity newest first. `last_output_at` is when a live run's log last grew (set by
 * the owner's keepalive).
 */
export class RunViews1763725000000 implements MigrationInterface {
  name = 'RunViews1763725000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE heartbeat_runs ADD COLUMN last_output_at timestamptz`);
    // replaces heartbeat_runs_company_idx (company_id, created_at DESC): same order, keyset tie-break, covering columns
    await q.query(`CREATE INDEX heartbeat_runs_company_created_idx ON heartbeat_runs (company_id, created_at, id) INCLUDE (status, error_code)`);
    await q.query(`DROP INDEX IF EXISTS heartbeat_runs_company_idx`);
    await q.query(`CREATE INDEX heartbeat_runs_company_live_idx ON heartbeat_runs (company_id, created_at DESC) WHERE status IN ('queued','running')`);
    await q.query(`CREATE INDEX heartbeat_runs_company_failed_idx ON heartbeat_runs (company_id, finished_at) WHERE status IN ('failed','timed_out')`);
    await q.query(`CREATE INDEX activity_agent_actor_idx ON activity_log (company_id, created_at DESC, id DESC) WHERE actor_type = 'agent'`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX IF EXISTS activity_agent_actor_idx, heartbeat_runs_company_failed_idx, heartbeat_runs_company_live_idx`);
    await q.query(`CREATE INDEX IF NOT EXISTS heartbeat_runs_company_idx ON heartbeat_runs (company_id, created_at DESC)`);
    await q.query(`DROP INDEX IF EXISTS heartbeat_runs_company_created_idx`);
    await q.query(`ALTER TABLE heartbeat_runs DROP COLUMN IF EXISTS last_output_at`);
  }
}
