import { iso, isoRequired } from '../../database/row-mapping';
import type { RunResponseDto } from './dto/heartbeat.dto';
import type { RunStatus, WakeContext } from '../adapters/run.types';

/**
 * Shapes shared by the heartbeat engine: run rows as read from SQL, the run response, the agent's
 * heartbeat policy (statuses, the wake context and outcomes are the executors': adapters/run.types.ts).
 */

/** A heartbeat_runs row (snake_case from SQL). */
export interface RunRow {
  id: string;
  company_id: string;
  agent_id: string;
  wakeup_request_id: string | null;
  status: RunStatus;
  invocation_source: string;
  trigger_detail: string | null;
  adapter_type: string;
  issue_id: string | null;
  context_snapshot: WakeContext;
  started_at: Date | null;
  finished_at: Date | null;
  exit_code: number | null;
  error_code: string | null;
  error: string | null;
  usage_json: Record<string, unknown> | null;
  result_json: Record<string, unknown> | null;
  log_path: string | null;
  log_bytes: string | number;
  /** when the run's log last grew (the owner's keepalive notices it) */
  last_output_at?: Date | null;
  claimed_by: string | null;
  lease_expires_at: Date | null;
  /** W3C traceparent of the run's trace (docs/tracing.md); null when tracing was off at the wake */
  trace_parent?: string | null;
  created_at: Date;
  updated_at: Date;
}

/** The agents columns the engine reads. */
export interface AgentRow {
  id: string;
  company_id: string;
  name: string;
  role: string;
  title: string | null;
  capabilities: string;
  status: string;
  adapter_type: string;
  adapter_config: Record<string, unknown>;
  runtime_config: Record<string, unknown>;
  metadata: Record<string, unknown>;
  budget_monthly_cents: number;
  spent_monthly_cents: number;
}

/** The run record of the API. The log path is relative to the data directory. */
export function toRunResponse(r: RunRow): RunResponseDto {
  return {
    id: r.id,
    runId: r.id,
    companyId: r.company_id,
    agentId: r.agent_id,
    wakeupRequestId: r.wakeup_request_id,
    status: r.status,
    invocationSource: r.invocation_source,
    triggerDetail: r.trigger_detail,
    adapterType: r.adapter_type,
    issueId: r.issue_id,
    contextSnapshot: r.context_snapshot,
    startedAt: iso(r.started_at),
    finishedAt: iso(r.finished_at),
    exitCode: r.exit_code,
    errorCode: r.error_code,
    error: r.error,
    usageJson: r.usage_json,
    resultJson: r.result_json,
    logPath: r.log_path,
    logStore: r.log_path ? 'local_file' : null,
    logRef: r.log_path,
    logBytes: Number(r.log_bytes),
    lastOutputAt: iso(r.last_output_at ?? null),
    claimedBy: r.claimed_by,
    leaseExpiresAt: iso(r.lease_expires_at),
    createdAt: isoRequired(r.created_at),
    updatedAt: isoRequired(r.updated_at),
  };
}
export type RunResponse = RunResponseDto;

/** Per-agent settings from runtimeConfig (with defaults). */
export function heartbeatPolicy(runtimeConfig: Record<string, unknown> | null | undefined) {
  const rc = runtimeConfig ?? {};
  const hb = (rc.heartbeat && typeof rc.heartbeat === 'object' ? rc.heartbeat : {}) as Record<string, unknown>;
  const int = (v: unknown, def: number) => (typeof v === 'number' && Number.isInteger(v) && v > 0 ? v : def);
  return {
    enabled: hb.enabled === true,
    intervalSec: int(hb.intervalSec, 0),
    skipWhenIdle: hb.skipWhenIdle !== false,
    /** `wakeOnDemand: false` refuses every non-timer wake (recorded as skipped) */
    wakeOnDemand: hb.wakeOnDemand !== false,
    maxConcurrentRuns: int(hb.maxConcurrentRuns ?? rc.maxConcurrentRuns, 1),
  };
}
