import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Routines: recurring work for an agent. Each trigger keeps its next firing time in the database
 * (`next_run_at`, NULL when it cannot fire: manual kind, disabled, or the routine paused), so a
 * firing is claimed by a conditional UPDATE across instances; `(trigger_id, scheduled_for)` is
 * unique as a second guarantee that one scheduled time never yields two executions.
 */
export class Routines1763720000000 implements MigrationInterface {
  name = 'Routines1763720000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE routines (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        company_id uuid NOT NULL REFERENCES companies(id) ON DELETE CASCADE,
        project_id uuid REFERENCES projects(id) ON DELETE SET NULL,
        goal_id uuid REFERENCES goals(id) ON DELETE SET NULL,
        parent_issue_id uuid REFERENCES issues(id) ON DELETE SET NULL,
        title text NOT NULL,
        description text,
        assignee_agent_id uuid NOT NULL REFERENCES agents(id) ON DELETE CASCADE,
        priority text NOT NULL DEFAULT 'medium',
        status text NOT NULL DEFAULT 'active' CHECK (status IN ('active','paused')),
        concurrency_policy text NOT NULL DEFAULT 'skip_if_active' CHECK (concurrency_policy IN ('skip_if_active','always_create')),
        catch_up_policy text NOT NULL DEFAULT 'coalesce' CHECK (catch_up_policy IN ('coalesce','skip_missed')),
        routine_key text,
        managed_by text,
        created_by_agent_id uuid,
        created_by_user_id text,
        updated_by_agent_id uuid,
        updated_by_user_id text,
        last_triggered_at timestamptz,
        last_enqueued_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX routines_company_created_idx ON routines (company_id, created_at, id)`);
    await q.query(`CREATE INDEX routines_assignee_idx ON routines (assignee_agent_id)`);
    // built-in agent routines are found by their key
    await q.query(`CREATE UNIQUE INDEX routines_company_key ON routines (company_id, routine_key) WHERE routine_key IS NOT NULL`);

    await q.query(`
      CREATE TABLE routine_triggers (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        company_id uuid NOT NULL REFERENCES companies(id) ON DELETE CASCADE,
        routine_id uuid NOT NULL REFERENCES routines(id) ON DELETE CASCADE,
        kind text NOT NULL CHECK (kind IN ('schedule','manual')),
        label text,
        enabled boolean NOT NULL DEFAULT true,
        cron_expression text,
        timezone text,
        next_run_at timestamptz,
        last_fired_at timestamptz,
        last_result text,
        created_by_agent_id uuid,
        created_by_user_id text,
        updated_by_agent_id uuid,
        updated_by_user_id text,
        -- clock time: triggers created in one transaction keep their order
        created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        CHECK (kind = 'manual' OR (cron_expression IS NOT NULL AND timezone IS NOT NULL))
      )`);
    await q.query(`CREATE INDEX routine_triggers_routine_idx ON routine_triggers (routine_id, created_at)`);
    // the scheduler's one question when idle: is anything due? (an index-only probe)
    await q.query(`CREATE INDEX routine_triggers_due_idx ON routine_triggers (next_run_at) WHERE next_run_at IS NOT NULL`);

    await q.query(`
      CREATE TABLE routine_runs (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        company_id uuid NOT NULL REFERENCES companies(id) ON DELETE CASCADE,
        routine_id uuid NOT NULL REFERENCES routines(id) ON DELETE CASCADE,
        trigger_id uuid REFERENCES routine_triggers(id) ON DELETE SET NULL,
        source text NOT NULL CHECK (source IN ('schedule','manual')),
        status text NOT NULL CHECK (status IN ('issue_created','skipped','failed')),
        triggered_at timestamptz NOT NULL DEFAULT now(),
        scheduled_for timestamptz,
        missed_count integer NOT NULL DEFAULT 0,
        trigger_payload jsonb,
        linked_issue_id uuid REFERENCES issues(id) ON DELETE SET NULL,
        coalesced_into_run_id uuid,
        failure_reason text,
        created_by_agent_id uuid,
        created_by_user_id text,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX routine_runs_routine_idx ON routine_runs (routine_id, created_at DESC, id DESC)`);
    await q.query(`CREATE INDEX routine_runs_issue_idx ON routine_runs (linked_issue_id) WHERE linked_issue_id IS NOT NULL`);
    await q.query(`CREATE UNIQUE INDEX routine_runs_scheduled_key ON routine_runs (trigger_id, scheduled_for) WHERE scheduled_for IS NOT NULL`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE IF EXISTS routine_runs`);
    await q.query(`DROP TABLE IF EXISTS routine_triggers`);
    await q.query(`DROP TABLE IF EXISTS routines`);
  }
}
