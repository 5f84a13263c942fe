import { Injectable } from '@nestjs/common';
import { LiveEventBus } from '../../common/events/live-event-bus';
import { iso } from '../../database/row-mapping';
import type { RunRow } from './heartbeat.types';
import type { LogStream } from '../adapters/run.types';

/** Output of one run is published at most this often per stream (chunks in between are joined). */
const LOG_COALESCE_MS = 100;
/** and at most this much text per event (a longer chunk is cut into several events) */
const LOG_EVENT_MAX_CHARS = 16_384;

/** NOTIFY channel: a run was queued; every instance's dispatcher looks for claimable runs at once. */
export const RUN_QUEUED_CHANNEL = 'heartbeat_run_queued';

type RunRef = Pick<RunRow, 'id' | 'company_id' | 'agent_id' | 'issue_id'>;

/** Publishes the engine's changes on the live stream: runs queued, run status, run output and lifecycle events, agent status. */
@Injectable()
export class RunLiveEvents {
  constructor(private readonly bus: LiveEventBus) {}

  /** Sent with the queuing transaction's COMMIT: other instances hear of the run without waiting for their tick. */
  signalQueued(): Promise<void> {
    return this.bus.signal(RUN_QUEUED_CHANNEL);
  }

  queued(run: RunRow): void {
    this.bus.publish(run.company_id, 'heartbeat.run.queued', {
      runId: run.id,
      agentId: run.agent_id,
      issueId: run.issue_id,
      invocationSource: run.invocation_source,
      triggerDetail: run.trigger_detail,
      wakeupRequestId: run.wakeup_request_id,
    });
  }

  status(run: RunRow): void {
    this.bus.publish(run.company_id, 'heartbeat.run.status', {
      runId: run.id,
      agentId: run.agent_id,
      issueId: run.issue_id,
      status: run.status,
      invocationSource: run.invocation_source,
      triggerDetail: run.trigger_detail,
      error: run.error,
      errorCode: run.error_code,
      exitCode: run.exit_code,
      startedAt: iso(run.started_at),
      finishedAt: iso(run.finished_at),
    });
  }

  event(run: RunRef, eventType: string, message: string, payload: Record<string, unknown> | null = null): void {
    this.bus.publish(run.company_id, 'heartbeat.run.event', {
      runId: run.id,
      agentId: run.agent_id,
      issueId: run.issue_id,
      eventType,
      stream: 'system',
      level: 'info',
      message,
      payload,
      lastEventAt: new Date().toISOString(),
    });
  }

  agentStatus(companyId: string, agentId: string, status: string, outcome: string): void {
    this.bus.publish(companyId, 'agent.status', { agentId, status, outcome });
  }

  /** A sink for one run's (already redacted) log output: chunks are joined per stream and published every 100 ms. */
  logSink(run: RunRef): { write(stream: LogStream, chunk: string): void; close(): void } {
    let seq = 0;
    const buffered = new Map<LogStream, string>();
    let timer: NodeJS.Timeout | null = null;
    const flush = () => {
      timer = null;
      for (const [stream, text] of buffered) {
        for (let i = 0; i < text.length; i += LOG_EVENT_MAX_CHARS) {
          this.bus.publish(run.company_id, 'heartbeat.run.log', {
            runId: run.id,
            agentId: run.agent_id,
            issueId: run.issue_id,
            ts: new Date().toISOString(),
            seq: ++seq,
            stream,
            chunk: text.slice(i, i + LOG_EVENT_MAX_CHARS),
            truncated: false,
          });
        }
      }
      buffered.clear();
    };
    return {
      write: (stream, chunk) => {
        buffered.set(stream, (buffered.get(stream) ?? '') + chunk);
        timer ??= setTimeout(flush, LOG_COALESCE_MS);
      },
      close: () => {
        if (timer) clearTimeout(timer);
        flush();
      },
    };
  }
}
