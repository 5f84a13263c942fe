import { iso, isoRequired } from '../../database/row-mapping';
import type { RunEventDto } from './dto/run-views.dto';
import type { RunRow } from './heartbeat.types';

type Draft = Omit<RunEventDto, 'id' | 'seq' | 'companyId' | 'runId' | 'agentId' | 'stream' | 'color'>;

const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);

function queued(run: RunRow): Draft {
  const c = run.context_snapshot as Record<string, unknown>;
  const reason = typeof c.reason === 'string' ? c.reason : null;
  return {
    eventType: 'lifecycle',
    level: 'info',
    message: `run queued (${run.invocation_source}${reason ? `: ${reason}` : ''})`,
    payload: {
      invocationSource: run.invocation_source,
      triggerDetail: run.trigger_detail,
      reason,
      issueId: run.issue_id,
      wakeupRequestId: run.wakeup_request_id,
    },
    createdAt: isoRequired(run.created_at),
  };
}

function usage(run: RunRow, u: Record<string, unknown>, at: Date): Draft {
  const [input, cached, output] = ['inputTokens', 'cachedInputTokens', 'outputTokens'].map((k) => num(u[k]) ?? 0);
  const cost = num(u.costCents);
  return {
    eventType: 'usage',
    level: 'info',
    message: `usage: ${input + cached} input, ${output} output tokens${cost !== null ? `, ${cost} cents` : ''}`,
    payload: {
      inputTokens: input,
      cachedInputTokens: cached,
      outputTokens: output,
      costCents: cost,
      model: typeof u.model === 'string' ? u.model : null,
    },
    createdAt: isoRequired(at),
  };
}

function ended(run: RunRow, at: Date): Draft {
  const failed = run.status === 'failed' || run.status === 'timed_out';
  const why = run.error ?? run.error_code;
  return {
    eventType: 'lifecycle',
    level: failed ? 'error' : run.status === 'cancelled' ? 'warn' : 'info',
    message: `run ${run.status}${run.exit_code !== null ? ` (exit code ${run.exit_code})` : ''}${why ? `: ${why}` : ''}`,
    payload: { status: run.status, exitCode: run.exit_code, errorCode: run.error_code, error: run.error, finishedAt: iso(at) },
    createdAt: isoRequired(at),
  };
}

/**
 * A run's events, as its page lists them: derived from the run record, so a finished run keeps
 * them for as long as the run exists (the live stream's `heartbeat.run.event` messages are pruned
 * with the stream). Queued (why, for which issue), started, the usage the run reported, ended
 * (status, exit code, error code and error). Output is the run's log, not an event.
 */
export function runEvents(run: RunRow): RunEventDto[] {
  const out: Draft[] = [queued(run)];
  if (run.started_at) {
    out.push({
      eventType: 'lifecycle',
      level: 'info',
      message: 'run started',
      payload: { adapterType: run.adapter_type, claimedBy: run.claimed_by },
      createdAt: isoRequired(run.started_at),
    });
  }
  if (run.usage_json && run.finished_at) out.push(usage(run, run.usage_json, run.finished_at));
  if (run.finished_at) out.push(ended(run, run.finished_at));
  return out.map((e, i) => ({
    id: i + 1,
    seq: i + 1,
    companyId: run.company_id,
    runId: run.id,
    agentId: run.agent_id,
    stream: 'system',
    color: null,
    ...e,
  }));
}
