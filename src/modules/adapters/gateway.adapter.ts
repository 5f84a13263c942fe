import type { RunOutcome } from './run.types';
import type { AdapterExecutor, AdapterRun, AdapterRunContext, EnvironmentReport } from './adapter.types';
import { num, str } from './adapter.types';
import type { OutboundTarget } from '../../common/net/outbound-guard';
import { outcomeFromReport, STRICT_OUTBOUND } from './http.adapter';
import { connectWebSocket } from './websocket-client';
import { refusalIn } from '../../common/net/outbound-guard';

const DEFAULT_TIMEOUT_SEC = 600;

/**
 * `gateway_a`: connects to a WebSocket `url`, sends the wake as one JSON message
 * `{ type: "wake", agentId, runId, companyId, context, apiUrl, runToken }`, logs every message it
 * receives, and ends on `{ type: "completed", summary?, usage?, costCents? }` (succeeded),
 * `{ type: "failed", error? }` (failed), a close without completion (failed), or the timeout.
 * Cancel sends `{ type: "cancel", runId, reason }` and closes.
 */
export class GatewayAdapter implements AdapterExecutor {
  readonly type = 'gateway_a';

  constructor(private readonly outbound: OutboundTarget = STRICT_OUTBOUND) {}

  readonly configSchema = {
    type: 'object',
    required: ['url'],
    properties: {
      url: { type: 'string', description: 'ws:// or wss:// URL of the gateway' },
      headers: {
        type: 'object',
        additionalProperties: { type: 'string' },
        description: 'sent with the upgrade request (e.g. Authorization)',
      },
      timeoutSec: { type: 'number', minimum: 0, default: DEFAULT_TIMEOUT_SEC },
    },
  };

  validateConfig(c: Record<string, unknown>): string[] {
    const errors: string[] = [];
    const url = str(c.url);
    if (!url) errors.push('url is required');
    else {
      try {
        const u = new URL(url);
        if (u.protocol !== 'ws:' && u.protocol !== 'wss:') errors.push('url must be ws:// or wss://');
        else {
          const refused = this.outbound.guard.refusalOf(url, this.outbound.options, ['ws:', 'wss:']);
          if (refused) errors.push(`url: ${refused.message}`);
        }
      } catch {
        errors.push('url must be a URL');
      }
    }
    if (
      c.headers !== undefined &&
      (!c.headers || typeof c.headers !== 'object' || Object.values(c.headers).some((v) => typeof v !== 'string'))
    ) {
      errors.push('headers must map names to strings');
    }
    if (c.timeoutSec !== undefined && (typeof c.timeoutSec !== 'number' || c.timeoutSec < 0))
      errors.push('timeoutSec must be a number >= 0');
    return errors;
  }

  start(ctx: AdapterRunContext): AdapterRun {
    const c = ctx.config;
    const timeoutSec = num(c.timeoutSec, 0) || DEFAULT_TIMEOUT_SEC;
    const abort = new AbortController();
    let settle: (o: RunOutcome) => void = () => undefined;
    let settled = false;
    const done = new Promise<RunOutcome>((resolve) => {
      settle = (o) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        resolve(o);
      };
    });
    let sendCancel: ((reason: string) => void) | null = null;
    const timer = setTimeout(() => {
      ctx.log('system', `timeout after ${timeoutSec}s\n`);
      sendCancel?.('timeout');
      abort.abort();
      settle({ status: 'timed_out', errorCode: 'timeout', error: `timed out after ${timeoutSec}s` });
    }, timeoutSec * 1000);
    timer.unref();
    const refused = this.outbound.guard.refusalOf(String(c.url), this.outbound.options, ['ws:', 'wss:']);
    if (refused) {
      settle({ status: 'failed', errorCode: 'url_not_allowed', error: refused.message });
      return { done, cancel: () => undefined };
    }
    connectWebSocket(
      String(c.url),
      (c.headers as Record<string, string>) ?? {},
      {
        onOpen: (ws) => {
          ctx.log('system', `connected to ${c.url}\n`);
          sendCancel = (reason) => {
            try {
              ws.send(JSON.stringify({ type: 'cancel', runId: ctx.runId, reason }));
              ws.close();
            } catch {
              /* already closed */
            }
          };
          ws.send(
            JSON.stringify({
              type: 'wake',
              agentId: ctx.agentId,
              runId: ctx.runId,
              companyId: ctx.companyId,
              context: ctx.context,
              apiUrl: ctx.apiUrl,
              runToken: ctx.runToken,
            }),
          );
        },
        onMessage: (text) => {
          ctx.log('stdout', text.endsWith('\n') ? text : text + '\n');
          let msg: Record<string, unknown> | null = null;
          try {
            msg = JSON.parse(text) as Record<string, unknown>;
          } catch {
            return;
          }
          if (msg?.type === 'completed') settle({ status: 'succeeded', ...outcomeFromReport(msg) });
          else if (msg?.type === 'failed') {
            settle({
              status: 'failed',
              errorCode: 'remote_reported_failure',
              error: typeof msg.error === 'string' ? msg.error : 'the gateway reported a failure',
              ...outcomeFromReport(msg),
            });
          }
        },
        onClose: (reason) => settle({ status: 'failed', errorCode: 'gateway_closed', error: `${reason} before completion` }),
        onError: (err) => {
          const refusal = refusalIn(err);
          if (refusal) settle({ status: 'failed', errorCode: 'url_not_allowed', error: refusal.message });
          else settle({ status: 'failed', errorCode: 'gateway_unreachable', error: err.message });
        },
      },
      abort.signal,
      this.outbound.guard.lookup(this.outbound.options),
    );
    return {
      done,
      cancel: (reason) => {
        sendCancel?.(reason);
        abort.abort();
        settle({ status: 'cancelled', errorCode: 'cancelled', error: reason });
      },
    };
  }

  async testEnvironment(c: Record<string, unknown>): Promise<EnvironmentReport> {
    const errors = this.validateConfig(c);
    return errors.length
      ? { ok: false, checks: [{ name: 'config', ok: false, message: errors.join('; ') }] }
      : { ok: true, checks: [{ name: 'config', ok: true, message: 'url is a WebSocket URL' }] };
  }
}
