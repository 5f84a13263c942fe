import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The heartbeat engine: timer bookkeeping on agents (a next-due column computed by a trigger, so
 * any writer of runtime_config keeps it right and the scheduler can claim due agents with one
 * indexed query), and the indexes the dispatcher, the reaper and the wakeup rules query by.
 */
export class Heartbeat1763700500000 implements MigrationInterface {
  name = 'Heartbeat1763700500000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE agents ADD COLUMN heartbeat_last_fired_at timestamptz, ADD COLUMN heartbeat_next_due_at timestamptz`);
    // next due = last fire (or creation) + runtimeConfig.heartbeat.intervalSec, only while the timer is enabled
    // and the agent can run; NULL means "no timer".
    await q.query(`
      CREATE FUNCTION agents_heartbeat_next_due() RETURNS trigger LANGUAGE plpgsql AS $$
      DECLARE
        hb jsonb := NEW.runtime_config->'heartbeat';
        secs double precision;
      BEGIN
        NEW.heartbeat_next_due_at := NULL;
        -- nested IFs: a malformed intervalSec must never make the cast (and the agent write) fail
        IF jsonb_typeof(hb) = 'object' AND hb->>'enabled' = 'true' AND jsonb_typeof(hb->'intervalSec') = 'number'
           AND NEW.status NOT IN ('paused','terminated','pending_approval') THEN
          secs := (hb->>'intervalSec')::double precision;
          IF secs > 0 AND secs < 1e9 THEN
            NEW.heartbeat_next_due_at := COALESCE(NEW.heartbeat_last_fired_at, NEW.created_at, now()) + make_interval(secs => secs);
          END IF;
        END IF;
        RETURN NEW;
      END $$`);
    await q.query(`
      CREATE TRIGGER agents_heartbeat_next_due BEFORE INSERT OR UPDATE OF runtime_config, heartbeat_last_fired_at, status
        ON agents FOR EACH ROW EXECUTE FUNCTION agents_heartbeat_next_due()`);
    await q.query(`UPDATE agents SET runtime_config = runtime_config`);
    await q.query(`CREATE INDEX agents_heartbeat_due_idx ON agents (heartbeat_next_due_at) WHERE heartbeat_next_due_at IS NOT NULL`);

    // dispatcher: oldest queued first; reaper: running runs by lease; keepalive: runs of one instance
    await q.query(`CREATE INDEX heartbeat_runs_queued_idx ON heartbeat_runs (created_at) WHERE status = 'queued'`);
    await q.query(`CREATE INDEX heartbeat_runs_lease_idx ON heartbeat_runs (lease_expires_at) WHERE status = 'running'`);
    await q.query(`CREATE INDEX heartbeat_runs_claimed_idx ON heartbeat_runs (claimed_by) WHERE status = 'running'`);
    await q.query(`CREATE INDEX heartbeat_runs_company_agent_idx ON heartbeat_runs (company_id, agent_id, created_at DESC)`);
    await q.query(`CREATE INDEX heartbeat_runs_company_status_idx ON heartbeat_runs (company_id, status, created_at DESC)`);
    // loop breaker counts wakes per agent and issue; deferred wakes are promoted per agent and issue
    await q.query(`CREATE INDEX wakeups_agent_issue_idx ON agent_wakeup_requests (agent_id, issue_id, created_at DESC) WHERE issue_id IS NOT NULL`);
    await q.query(`CREATE INDEX wakeups_deferred_idx ON agent_wakeup_requests (agent_id, issue_id, created_at) WHERE status = 'deferred'`);
    await q.query(`CREATE INDEX wakeups_run_idx ON agent_wakeup_requests (run_id) WHERE run_id IS NOT NULL`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX IF EXISTS wakeups_run_idx, wakeups_deferred_idx, wakeups_agent_issue_idx, heartbeat_runs_company_status_idx,
      heartbeat_runs_company_agent_idx, heartbeat_runs_claimed_idx, heartbeat_runs_lease_idx, heartbeat_runs_queued_idx, agents_heartbeat_due_idx`);
    await q.query(`DROP TRIGGER IF EXISTS agents_heartbeat_next_due ON agents`);
    await q.query(`DROP FUNCTION IF EXISTS agents_heartbeat_next_due()`);
    await q.query(`ALTER TABLE agents DROP COLUMN IF EXISTS heartbeat_next_due_at, DROP COLUMN IF EXISTS heartbeat_last_fired_at`);
  }
}
