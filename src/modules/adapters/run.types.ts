/**
 * What a heartbeat run is to the executors: the context it was woken with, the log streams it
 * writes, and how it ended. Declared here, beside the executors that take and report them; the
 * heartbeat engine (which imports adapters) stores them in its run rows.
 */

export type RunStatus = 'queued' | 'running' | 'succeeded' | 'failed' | 'cancelled' | 'timed_out';
export const LIVE_RUN_STATUSES: RunStatus[] = ['queued', 'running'];
export const RUN_STATUSES: RunStatus[] = ['queued', 'running', 'succeeded', 'failed', 'cancelled', 'timed_out'];
export type FinalRunStatus = Exclude<RunStatus, 'queued' | 'running'>;

/** What a run was woken for; stored as the run's context snapshot and handed to the adapter. */
export interface WakeContext {
  source: string;
  triggerDetail: string | null;
  reason: string | null;
  payload: Record<string, unknown>;
  issueId: string | null;
  commentId: string | null;
  forceFreshSession: boolean;
  wakeupRequestIds: string[];
  /** wakes merged into this run after it was queued (coalesced), oldest first */
  coalesced?: Array<{ wakeupRequestId: string; source: string; reason: string | null; payload: Record<string, unknown> }>;
  [k: string]: unknown;
}

/** A comment a wake names, as the agent's prompt shows it. */
export interface WakeComment {
  id: string;
  issueId: string;
  body: string;
  author: { kind: 'agent' | 'user'; id: string; name: string | null };
  createdAt: string;
}

/** What a run's wake names, read when the run starts (the issue, the comments): the agent is told in its prompt. */
export interface WakeDetails {
  issue: {
    id: string;
    identifier: string;
    title: string;
    status: string;
    description: string | null;
    /** e.g. `routine_execution` with the routine's id */
    originKind: string;
    originId: string | null;
  } | null;
  /** the wake's comment and those of wakes coalesced into the run, oldest first */
  comments: WakeComment[];
}

/** How a run ended, as the executor reports it. */
export interface RunOutcome {
  status: FinalRunStatus;
  exitCode?: number | null;
  errorCode?: string | null;
  error?: string | null;
  usage?: Record<string, unknown> | null;
  result?: Record<string, unknown> | null;
}

/** The streams of a run's log. */
export type LogStream = 'stdout' | 'stderr' | 'system';
