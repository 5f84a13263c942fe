import { iso, isoRequired } from '../../database/row-mapping';
import type { RunEventDto } from './dto/run-views.dto';
import type { RunRecord } from './heartbeat.types';

type Draft = Omit<RunEventDto, 'id' | 'seq' | 'companyId' | 'runId' | 'agentId' | 'stream' | 'color'>;

const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);

function queued(run: RunRecord): Draft {
  const c = run.contextSnapshot as Record<string, unknown>;
  const reason = typeof c.reason === 'string' ? c.reason : null;
  return {
    eventType: 'lifecycle',
    level: 'info',
    message: `run queued (${run.invocationSource}${reason ? `: ${reason}` : ''})`,
    payload: {
      invocationSource: run.invocationSource,
      triggerDetail: run.triggerDetail,
      reason,
      issueId: run.issueId,
      wakeupRequestId: run.wakeupRequestId,
    },
    createdAt: isoRequired(run.createdAt),
  };
}

function usage(run: RunRecord, u: Record<string, unknown>, at: Date): Draft {
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

function ended(run: RunRecord, at: Date): Draft {
  const failed = run.status === 'failed' || run.status === 'timed_out';
  const why = run.error ?? run.errorCode;
  return {
    eventType: 'lifecycle',
    level: failed ? 'error' : run.status === 'cancelled' ? 'warn' : 'info',
    message: `run ${run.status}${run.exitCode !== null ? ` (exit code ${run.exitCode})` : ''}${why ? `: ${why}` : ''}`,
    payload: { status: run.status, exitCode: run.exitCode, errorCode: run.errorCode, error: run.error, finishedAt: iso(at) },
    createdAt: isoRequired(at),
  };
}

/**
 * A run's events, as its page lists them: derived from the run record, so a finished run keeps
 * them for as long as the run exists (the live stream's `heartbeat.run.event` messages are pruned
 * with the stream). Queued (why, for which issue), started, the usage the run reported, ended
 * (status, exit code, error code and error). Output is the run's log, not an event.
 */
export function runEvents(run: RunRecord): RunEventDto[] {
  const out: Draft[] = [queued(run)];
  if (run.startedAt) {
    out.push({
      eventType: 'lifecycle',
      level: 'info',
      message: 'run started',
      payload: { adapterType: run.adapterType, claimedBy: run.claimedBy },
      createdAt: isoRequired(run.startedAt),
    });
  }
  if (run.usageJson && run.finishedAt) out.push(usage(run, run.usageJson, run.finishedAt));
  if (run.finishedAt) out.push(ended(run, run.finishedAt));
  return out.map((e, i) => ({
    id: i + 1,
    seq: i + 1,
    companyId: run.companyId,
    runId: run.id,
    agentId: run.agentId,
    stream: 'system',
    color: null,
    ...e,
  }));
}
