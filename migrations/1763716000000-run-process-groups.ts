import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Crash safety of agent processes: each run records the process group of its local process (and
 * the host and the leader's start time, so a recycled pid is never mistaken for it), so that after
 * a crash the restarted instance kills what the dead one left behind. A wake re-queued after its
 * run was lost with its instance points at that run (`retry_of_run_id`): a second loss is final.
 */
export class RunProcessGroups1763716000000 implements MigrationInterface {
  name = 'RunProcessGroups1763716000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE heartbeat_runs ADD COLUMN process_group_id integer, ADD COLUMN process_host text, ADD COLUMN process_start_ticks bigint`);
    await q.query(`CREATE INDEX heartbeat_runs_process_host_idx ON heartbeat_runs (process_host) WHERE process_group_id IS NOT NULL`);
    await q.query(`ALTER TABLE agent_wakeup_requests ADD COLUMN retry_of_run_id uuid`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE agent_wakeup_requests DROP COLUMN IF EXISTS retry_of_run_id`);
    await q.query(`DROP INDEX IF EXISTS heartbeat_runs_process_host_idx`);
    await q.query(`ALTER TABLE heartbeat_runs DROP COLUMN IF EXISTS process_group_id, DROP COLUMN IF EXISTS process_host, DROP COLUMN IF EXISTS process_start_ticks`);
  }
}
