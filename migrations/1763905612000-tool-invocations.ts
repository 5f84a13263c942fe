import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Tool invocations (tools module): one row per call of a company connection's tool through the
 * gateway, written when the call starts and finished when it ends, so a run's decisions read from
 * one record per call: the policy's decision (allow, require_approval, deny), what became of the
 * call (awaiting_approval, executing, succeeded, failed, denied, timed_out) and why (reason_code),
 * the action request an "ask" call waited on, and the id the agent's runtime gave the call
 * (Claude Code's tool use id), which pairs it with the call in the run's transcript.
 */
export class ToolInvocations1763905612000 implements MigrationInterface {
  name = 'ToolInvocations1763905612000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE tool_invocations (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        company_id uuid NOT NULL REFERENCES companies(id) ON DELETE CASCADE,
        agent_id uuid NOT NULL,
        run_id uuid,
        connection_id uuid NOT NULL REFERENCES tool_connections(id) ON DELETE CASCADE,
        tool_name text NOT NULL,
        tool_use_id text,
        decision text NOT NULL CHECK (decision IN ('allow', 'require_approval', 'deny')),
        status text NOT NULL CHECK (status IN ('awaiting_approval', 'executing', 'succeeded', 'failed', 'denied', 'timed_out')),
        action_request_id uuid REFERENCES tool_action_requests(id) ON DELETE SET NULL,
        reason_code text,
        duration_ms integer,
        result_bytes integer,
        created_at timestamptz NOT NULL DEFAULT now(),
        started_at timestamptz,
        finished_at timestamptz
      )`);
    await q.query(`CREATE INDEX tool_invocations_run ON tool_invocations (company_id, run_id, created_at) WHERE run_id IS NOT NULL`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE IF EXISTS tool_invocations`);
  }
}
