import { Injectable } from '@nestjs/common';
import { LiveEventBus } from '../../common/events/live-event-bus';
import { iso } from '../../database/row-mapping';
import type { RunRecord } from './heartbeat.types';
import type { LogStream } from '../adapters/run.types';

/** Output of one run is published at most this often per stream (chunks in between are joined). */
const LOG_COALESCE_MS = 100;
/**
 * A run's live output is a tail: at most this much text per stream and window (40 KB/s). During a
 * burst the event carries the newest whole lines, `truncated: true` and how much it skipped; the run
 * log has everything. Every event is stored and encoded for the database, so a CLI printing
 * thousands of event lines a second would otherwise spend most of its parsing CPU on live events.
 */
const LOG_WINDOW_MAX_CHARS = 4_096;

/** The last LOG_WINDOW_MAX_CHARS of `text`, never starting inside a surrogate pair (jsonb refuses a lone half). */
function tail(text: string): string {
  const t = text.slice(-LOG_WINDOW_MAX_CHARS);
  const c = t.charCodeAt(0);
  return c >= 0xdc00 && c <= 0xdfff ? t.slice(1) : t;
}

/** NOTIFY channel: a run was queued; every instance's dispatcher looks for claimable runs at once. */
export const RUN_QUEUED_CHANNEL = 'heartbeat_run_queued';

type RunRef = Pick<RunRecord, 'id' | 'companyId' | 'agentId' | 'issueId'>;

/** Publishes the engine's changes on the live stream: runs queued, run status, run output and lifecycle events, agent status. */
@Injectable()
export class RunLiveEvents {
  constructor(private readonly bus: LiveEventBus) {}

  /** Sent with the queuing transaction's COMMIT: other instances hear of the run without waiting for their tick. */
  signalQueued(): Promise<void> {
    return this.bus.signal(RUN_QUEUED_CHANNEL);
  }

  queued(run: RunRecord): void {
    this.bus.publish(run.companyId, 'heartbeat.run.queued', {
      runId: run.id,
      agentId: run.agentId,
      issueId: run.issueId,
      invocationSource: run.invocationSource,
      triggerDetail: run.triggerDetail,
      wakeupRequestId: run.wakeupRequestId,
    });
  }

  status(run: RunRecord): void {
    this.bus.publish(run.companyId, 'heartbeat.run.status', {
      runId: run.id,
      agentId: run.agentId,
      issueId: run.issueId,
      status: run.status,
      invocationSource: run.invocationSource,
      triggerDetail: run.triggerDetail,
      error: run.error,
      errorCode: run.errorCode,
      exitCode: run.exitCode,
      startedAt: iso(run.startedAt),
      finishedAt: iso(run.finishedAt),
    });
  }

  event(run: RunRef, eventType: string, message: string, payload: Record<string, unknown> | null = null): void {
    this.bus.publish(run.companyId, 'heartbeat.run.event', {
      runId: run.id,
      agentId: run.agentId,
      issueId: run.issueId,
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
    // per stream: the window's text (a bounded tail while a burst goes on) and how much was cut off
    const buffered = new Map<LogStream, { text: string; skipped: number }>();
    let timer: NodeJS.Timeout | null = null;
    const flush = () => {
      timer = null;
      for (const [stream, b] of buffered) {
        let { text, skipped } = b;
        if (text.length > LOG_WINDOW_MAX_CHARS) {
          const t = tail(text);
          skipped += text.length - t.length;
          text = t;
        }
        if (skipped > 0) {
          // the newest whole lines (a line longer than the window: its end)
          const nl = text.indexOf('\n');
          if (nl >= 0 && nl < text.length - 1) {
            skipped += nl + 1;
            text = text.slice(nl + 1);
          }
        }
        this.bus.publish(run.companyId, 'heartbeat.run.log', {
          runId: run.id,
          agentId: run.agentId,
          issueId: run.issueId,
          ts: new Date().toISOString(),
          seq: ++seq,
          stream,
          chunk: text,
          truncated: skipped > 0,
          ...(skipped > 0 ? { skippedChars: skipped } : {}),
        });
      }
      buffered.clear();
    };
    return {
      write: (stream, chunk) => {
        const b = buffered.get(stream);
        if (!b) buffered.set(stream, { text: chunk, skipped: 0 });
        else {
          b.text += chunk;
          // a burst: only the window's tail can be published, the rest is dropped as it comes
          if (b.text.length > 2 * LOG_WINDOW_MAX_CHARS) {
            const t = tail(b.text);
            b.skipped += b.text.length - t.length;
            b.text = t;
          }
        }
        timer ??= setTimeout(flush, LOG_COALESCE_MS);
      },
      close: () => {
        if (timer) clearTimeout(timer);
        flush();
      },
    };
  }
}
