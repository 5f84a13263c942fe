import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Costs, finance events and budget enforcement.
 * - cost_events: one row per reported usage; idempotent by client key or by (run, provider, model, occurredAt).
 * - cost_usage: running totals per scope (company, agent, project) and window (calendar month, lifetime, UTC day),
 *   maintained in the cost-event transaction. Budget checks and all-time reports read one row instead of
 *   summing millions of events; the row lock on it serialises concurrent events of a scope.
 * - budget_incidents: soft (warn) and hard (limit) incidents, one per policy, window, kind and budget amount.
 * - budget_window_resets: the month-start tick claims its window here so it runs once across instances.
 * - finance_events: non-token accounting records (fees, credit purchases, refunds, adjustments).
 */
export class Costs1763700700000 implements MigrationInterface {
  name = 'Costs1763700700000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE cost_events (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        company_id uuid NOT NULL REFERENCES companies(id) ON DELETE CASCADE,
        -- no foreign key: spend history outlives a deleted agent
        agent_id uuid NOT NULL,
        issue_id uuid,
        project_id uuid,
        goal_id uuid,
        heartbeat_run_id uuid,
        provider text NOT NULL,
        model text NOT NULL,
        biller text NOT NULL,
        billing_type text NOT NULL DEFAULT 'unknown'
          CHECK (billing_type IN ('metered_api','subscription_included','subscription_overage','credits','fixed','unknown')),
        billing_code text,
        cost_status text NOT NULL DEFAULT 'reported' CHECK (cost_status IN ('reported','unpriced')),
        -- null when unpriced: the money is unknown, not zero
        cost_cents integer CHECK (cost_cents >= 0),
        input_tokens bigint CHECK (input_tokens >= 0),
        cached_input_tokens bigint CHECK (cached_input_tokens >= 0),
        output_tokens bigint CHECK (output_tokens >= 0),
        occurred_at timestamptz NOT NULL,
        idempotency_key text,
        reported_by_actor_type text NOT NULL,
        reported_by_actor_id text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT cost_events_unpriced_has_no_money CHECK ((cost_status = 'unpriced') = (cost_cents IS NULL))
      )`);
    // range reports (summary, window spend) read company + time; INCLUDE keeps them index-only
    await q.query(`CREATE INDEX cost_events_company_time_idx ON cost_events (company_id, occurred_at)
      INCLUDE (agent_id, cost_cents, input_tokens, cached_input_tokens, output_tokens)`);
    // by-agent over a range: grouped index order, no sort
    await q.query(`CREATE INDEX cost_events_company_agent_time_idx ON cost_events (company_id, agent_id, occurred_at)
      INCLUDE (cost_cents, input_tokens, cached_input_tokens, output_tokens)`);
    await q.query(`CREATE INDEX cost_events_company_project_time_idx ON cost_events (company_id, project_id, occurred_at) WHERE project_id IS NOT NULL`);
    await q.query(`CREATE UNIQUE INDEX cost_events_idempotency_key ON cost_events (company_id, idempotency_key) WHERE idempotency_key IS NOT NULL`);
    await q.query(`CREATE UNIQUE INDEX cost_events_run_dedupe_key ON cost_events (heartbeat_run_id, provider, model, occurred_at) WHERE heartbeat_run_id IS NOT NULL`);

    await q.query(`
      CREATE TABLE cost_usage (
        company_id uuid NOT NULL REFERENCES companies(id) ON DELETE CASCADE,
        scope_type text NOT NULL CHECK (scope_type IN ('company','agent','project')),
        scope_id uuid NOT NULL,
        -- utc_day rows serve range reports (whole days from here, partial days from cost_events)
        window_kind text NOT NULL CHECK (window_kind IN ('calendar_month_utc','lifetime','utc_day')),
        -- first instant of the UTC month or day; 1970-01-01 for lifetime
        window_start timestamptz NOT NULL,
        billed_cents bigint NOT NULL DEFAULT 0,
        input_tokens bigint NOT NULL DEFAULT 0,
        cached_input_tokens bigint NOT NULL DEFAULT 0,
        output_tokens bigint NOT NULL DEFAULT 0,
        event_count integer NOT NULL DEFAULT 0,
        unpriced_event_count integer NOT NULL DEFAULT 0,
        updated_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (scope_type, scope_id, window_kind, window_start)
      )`);
    await q.query(`CREATE INDEX cost_usage_company_idx ON cost_usage (company_id, scope_type, window_kind, window_start)`);

    await q.query(`
      CREATE TABLE budget_incidents (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        company_id uuid NOT NULL REFERENCES companies(id) ON DELETE CASCADE,
        policy_id uuid NOT NULL REFERENCES budget_policies(id) ON DELETE CASCADE,
        scope_type text NOT NULL CHECK (scope_type IN ('company','agent','project')),
        scope_id uuid NOT NULL,
        metric text NOT NULL,
        window_kind text NOT NULL,
        window_start timestamptz NOT NULL,
        window_end timestamptz,
        kind text NOT NULL CHECK (kind IN ('soft','hard')),
        status text NOT NULL DEFAULT 'open' CHECK (status IN ('open','resolved')),
        budget_amount bigint NOT NULL,
        threshold_amount bigint NOT NULL,
        observed_amount bigint NOT NULL,
        -- a hard incident holds its scope paused until raised, or until its window expires
        hold_active boolean NOT NULL DEFAULT false,
        resolution text CHECK (resolution IN ('keep_paused','raise_budget_and_resume','window_reset')),
        resolved_at timestamptz,
        resolved_by_actor_type text,
        resolved_by_actor_id text,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    // exactly one soft and one hard incident per policy, window and budget amount (raising the budget re-arms)
    await q.query(`CREATE UNIQUE INDEX budget_incidents_once_key ON budget_incidents (policy_id, window_start, kind, budget_amount)`);
    await q.query(`CREATE INDEX budget_incidents_company_idx ON budget_incidents (company_id, status, created_at DESC)`);
    await q.query(`CREATE INDEX budget_incidents_holds_idx ON budget_incidents (scope_type, scope_id) WHERE hold_active`);

    await q.query(`
      CREATE TABLE budget_window_resets (
        window_start timestamptz PRIMARY KEY,
        claimed_by text NOT NULL,
        claimed_at timestamptz NOT NULL DEFAULT now()
      )`);

    await q.query(`
      CREATE TABLE finance_events (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        company_id uuid NOT NULL REFERENCES companies(id) ON DELETE CASCADE,
        kind text NOT NULL,
        direction text NOT NULL CHECK (direction IN ('debit','credit')),
        amount_cents bigint NOT NULL CHECK (amount_cents >= 0),
        currency text NOT NULL DEFAULT 'USD' CHECK (currency ~ '^[A-Z]{3}$'),
        estimated boolean NOT NULL DEFAULT false,
        biller text,
        provider text,
        agent_id uuid,
        cost_event_id uuid REFERENCES cost_events(id) ON DELETE SET NULL,
        description text,
        external_ref text,
        idempotency_key text,
        metadata jsonb,
        occurred_at timestamptz NOT NULL,
        created_by_actor_type text NOT NULL,
        created_by_actor_id text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX finance_events_company_time_idx ON finance_events (company_id, occurred_at DESC)`);
    await q.query(`CREATE UNIQUE INDEX finance_events_idempotency_key ON finance_events (company_id, idempotency_key) WHERE idempotency_key IS NOT NULL`);

    // run-count budgets count an agent's runs in a window
    await q.query(`CREATE INDEX budget_runs_agent_created_idx ON heartbeat_runs (agent_id, created_at)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX IF EXISTS budget_runs_agent_created_idx`);
    await q.query(`DROP TABLE IF EXISTS finance_events, budget_window_resets, budget_incidents, cost_usage, cost_events CASCADE`);
  }
}
