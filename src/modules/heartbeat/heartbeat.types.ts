import { iso, isoRequired } from '../../database/row-mapping';
import type { RunResponseDto } from './dto/heartbeat.dto';
import type { RunStatus, WakeContext } from '../adapters/run.types';

/**
 * Shapes shared by the heartbeat engine: run records as the repositories return them, the run response, the agent's
 * heartbeat policy (statuses, the wake context and outcomes are the executors': adapters/run.types.ts).
 */

/** A heartbeat_runs row as a record (the repositories select RUN_COLUMNS as these fields). */
export interface RunRecord {
  id: string;
  companyId: string;
  agentId: string;
  wakeupRequestId: string | null;
  status: RunStatus;
  invocationSource: string;
  triggerDetail: string | null;
  adapterType: string;
  issueId: string | null;
  contextSnapshot: WakeContext;
  startedAt: Date | null;
  finishedAt: Date | null;
  exitCode: number | null;
  errorCode: string | null;
  error: string | null;
  usageJson: Record<string, unknown> | null;
  resultJson: Record<string, unknown> | null;
  logPath: string | null;
  logBytes: string | number;
  /** when the run's log last grew (the owner's keepalive notices it) */
  lastOutputAt: Date | null;
  claimedBy: string | null;
  leaseExpiresAt: Date | null;
  /** W3C traceparent of the run's trace (docs/tracing.md); null when tracing was off at the wake */
  traceParent: string | null;
  createdAt: Date;
  updatedAt: Date;
}

/** The agent as the engine reads it (locked per wake and claim; agents/agent-engine.repository.ts selects it). */
export interface EngineAgentRecord {
  id: string;
  companyId: string;
  name: string;
  role: string;
  title: string | null;
  capabilities: string;
  status: string;
  adapterType: string;
  adapterConfig: Record<string, unknown>;
  runtimeConfig: Record<string, unknown>;
  metadata: Record<string, unknown>;
  budgetMonthlyCents: number;
  spentMonthlyCents: number;
}

/** The run record of the API. The log path is relative to the data directory. */
export function toRunResponse(r: RunRecord): RunResponseDto {
  return {
    id: r.id,
    runId: r.id,
    companyId: r.companyId,
    agentId: r.agentId,
    wakeupRequestId: r.wakeupRequestId,
    status: r.status,
    invocationSource: r.invocationSource,
    triggerDetail: r.triggerDetail,
    adapterType: r.adapterType,
    issueId: r.issueId,
    contextSnapshot: r.contextSnapshot,
    startedAt: iso(r.startedAt),
    finishedAt: iso(r.finishedAt),
    exitCode: r.exitCode,
    errorCode: r.errorCode,
    error: r.error,
    usageJson: r.usageJson,
    resultJson: r.resultJson,
    logPath: r.logPath,
    logStore: r.logPath ? 'local_file' : null,
    logRef: r.logPath,
    logBytes: Number(r.logBytes),
    lastOutputAt: iso(r.lastOutputAt),
    claimedBy: r.claimedBy,
    leaseExpiresAt: iso(r.leaseExpiresAt),
    createdAt: isoRequired(r.createdAt),
    updatedAt: isoRequired(r.updatedAt),
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
