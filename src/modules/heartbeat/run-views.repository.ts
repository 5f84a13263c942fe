import { Injectable } from '@nestjs/common';
import { CompanyScopedRepository } from '../../database/company-scoped.repository';
import { Db } from '../../database/db.service';

export interface RuntimeTotalsRow {
  run_count: number;
  input_tokens: string | number;
  cached_input_tokens: string | number;
  output_tokens: string | number;
  cost_cents: string | number;
  first_at: Date | null;
  last_id: string | null;
  last_status: string | null;
  last_error: string | null;
  last_error_code: string | null;
  last_at: Date | null;
  last_updated_at: Date | null;
  session_id: string | null;
}

/** A usage number of the usage record, 0 when absent or not a number. */
const usage = (key: string) =>
  `coalesce(sum(CASE WHEN jsonb_typeof(usage_json->'${key}') = 'number' THEN (usage_json->>'${key}')::numeric END), 0)`;

/** Read models over an agent's runs (the runtime-state page). */
@Injectable()
export class RunViewsRepository extends CompanyScopedRepository {
  constructor(db: Db) {
    super(db);
  }

  /**
   * One agent's runs summed (count, reported tokens and cost), its latest run, and the session its
   * next run of `adapterType` may resume (the latest succeeded run's, as the executor picks it).
   */
  runtimeTotals(companyId: string, agentId: string, adapterType: string): Promise<RuntimeTotalsRow | null> {
    return this.row<RuntimeTotalsRow>(
      companyId,
      `SELECT t.*, l.id AS last_id, l.status AS last_status, l.error AS last_error, l.error_code AS last_error_code,
              coalesce(l.finished_at, l.started_at, l.created_at) AS last_at, l.updated_at AS last_updated_at,
              (SELECT result_json->>'sessionId' FROM heartbeat_runs
                WHERE company_id = $1 AND agent_id = $2 AND status = 'succeeded' AND adapter_type = $3 AND result_json ? 'sessionId'
                ORDER BY finished_at DESC NULLS LAST LIMIT 1) AS session_id
         FROM (SELECT count(*)::int AS run_count, ${usage('inputTokens')} AS input_tokens, ${usage('cachedInputTokens')} AS cached_input_tokens,
                      ${usage('outputTokens')} AS output_tokens, ${usage('costCents')} AS cost_cents, min(created_at) AS first_at
                 FROM heartbeat_runs WHERE company_id = $1 AND agent_id = $2) t
         LEFT JOIN LATERAL (SELECT * FROM heartbeat_runs WHERE company_id = $1 AND agent_id = $2 ORDER BY created_at DESC, id DESC LIMIT 1) l ON true`,
      [agentId, adapterType],
    );
  }
}
