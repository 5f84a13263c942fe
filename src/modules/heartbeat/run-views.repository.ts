import { Injectable } from '@nestjs/common';
import { CompanyScopedRepository } from '../../database/company-scoped.repository';
import { Db } from '../../database/db.service';

export interface RuntimeTotalsRecord {
  runCount: number;
  inputTokens: string | number;
  cachedInputTokens: string | number;
  outputTokens: string | number;
  costCents: string | number;
  firstAt: Date | null;
  lastId: string | null;
  lastStatus: string | null;
  lastError: string | null;
  lastErrorCode: string | null;
  lastAt: Date | null;
  lastUpdatedAt: Date | null;
  sessionId: string | null;
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
  runtimeTotals(companyId: string, agentId: string, adapterType: string): Promise<RuntimeTotalsRecord | null> {
    return this.row<RuntimeTotalsRecord>(
      companyId,
      `SELECT t.*, l.id AS "lastId", l.status AS "lastStatus", l.error AS "lastError", l.error_code AS "lastErrorCode",
              coalesce(l.finished_at, l.started_at, l.created_at) AS "lastAt", l.updated_at AS "lastUpdatedAt",
              (SELECT result_json->>'sessionId' FROM heartbeat_runs
                WHERE company_id = $1 AND agent_id = $2 AND status = 'succeeded' AND adapter_type = $3 AND result_json ? 'sessionId'
                ORDER BY finished_at DESC NULLS LAST LIMIT 1) AS "sessionId"
         FROM (SELECT count(*)::int AS "runCount", ${usage('inputTokens')} AS "inputTokens", ${usage('cachedInputTokens')} AS "cachedInputTokens",
                      ${usage('outputTokens')} AS "outputTokens", ${usage('costCents')} AS "costCents", min(created_at) AS "firstAt"
                 FROM heartbeat_runs WHERE company_id = $1 AND agent_id = $2) t
         LEFT JOIN LATERAL (SELECT * FROM heartbeat_runs WHERE company_id = $1 AND agent_id = $2 ORDER BY created_at DESC, id DESC LIMIT 1) l ON true`,
      [agentId, adapterType],
    );
  }
}
