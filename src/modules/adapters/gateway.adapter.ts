import type { RunOutcome } from './run.types';
import { generateKeyPairSync } from 'node:crypto';
import { COMMON_CONFIG_FIELDS } from './adapter-config-schema';
import type { AdapterDescription, AdapterExecutor, AdapterRun, AdapterRunContext, EnvironmentReport } from './adapter.types';
import { refusalIn, type OutboundTarget } from '../../common/net/outbound-guard';
import { num, outcomeFromReport, str, STRICT_OUTBOUND } from './executor-kit';
import { connectWebSocket } from './websocket-client';

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

  readonly description: AdapterDescription = {
    label: 'WebSocket gateway (spec placeholder)',
    configSchema: {
      type: 'object',
      required: ['url'],
      properties: {
        ...COMMON_CONFIG_FIELDS,
        url: { type: 'string', format: 'uri-or-ws', description: 'ws:// or wss:// URL of the gateway' },
        authToken: { type: 'string' },
        disableDeviceAuth: { type: 'boolean' },
        devicePrivateKeyPem: { type: 'string', minLength: 1 },
        sessionKey: { type: 'string' },
      },
    },
    skills: 'unsupported',
    genAiSystem: null,
    outboundUrlFields: [['url', ['ws:', 'wss:']]],
    // a device identity is generated once, unless device authentication is disabled
    createDefaults: (c) =>
      c.disableDeviceAuth === true || c.devicePrivateKeyPem !== undefined
        ? c
        : { ...c, devicePrivateKeyPem: generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }).toString() },
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
    const session = new GatewaySession(ctx);
    const refused = this.outbound.guard.refusalOf(String(ctx.config.url), this.outbound.options, ['ws:', 'wss:']);
    if (refused) {
      session.settle({ status: 'failed', errorCode: 'url_not_allowed', error: refused.message });
      return { done: session.done, cancel: () => undefined };
    }
    session.connect(this.outbound);
    return { done: session.done, cancel: (reason) => session.cancel(reason) };
  }

  async testEnvironment(c: Record<string, unknown>): Promise<EnvironmentReport> {
    const errors = this.validateConfig(c);
    return errors.length
      ? { ok: false, checks: [{ name: 'config', ok: false, message: errors.join('; ') }] }
      : { ok: true, checks: [{ name: 'config', ok: true, message: 'url is a WebSocket URL' }] };
  }
}

/** One run's gateway connection: the wake sent on connect, the gateway's messages, its deadline, a cancel. */
class GatewaySession {
  readonly done: Promise<RunOutcome>;
  private resolve: (o: RunOutcome) => void = () => undefined;
  private settled = false;
  private readonly abort = new AbortController();
  private readonly timer: NodeJS.Timeout;
  private sendCancel: ((reason: string) => void) | null = null;

  constructor(private readonly ctx: AdapterRunContext) {
    this.done = new Promise<RunOutcome>((resolve) => (this.resolve = resolve));
    const timeoutSec = num(ctx.config.timeoutSec, 0) || DEFAULT_TIMEOUT_SEC;
    this.timer = setTimeout(() => {
      ctx.log('system', `timeout after ${timeoutSec}s\n`);
      this.sendCancel?.('timeout');
      this.abort.abort();
      this.settle({ status: 'timed_out', errorCode: 'timeout', error: `timed out after ${timeoutSec}s` });
    }, timeoutSec * 1000);
    this.timer.unref();
  }

  settle(o: RunOutcome): void {
    if (this.settled) return;
    this.settled = true;
    clearTimeout(this.timer);
    this.resolve(o);
  }

  connect(outbound: OutboundTarget): void {
    const { ctx } = this;
    const c = ctx.config;
    connectWebSocket(
      String(c.url),
      (c.headers as Record<string, string>) ?? {},
      {
        onOpen: (ws) => this.opened(ws),
        onMessage: (text) => this.message(text),
        onClose: (reason) => this.settle({ status: 'failed', errorCode: 'gateway_closed', error: `${reason} before completion` }),
        onError: (err) => {
          const refusal = refusalIn(err);
          if (refusal) this.settle({ status: 'failed', errorCode: 'url_not_allowed', error: refusal.message });
          else this.settle({ status: 'failed', errorCode: 'gateway_unreachable', error: err.message });
        },
      },
      this.abort.signal,
      outbound.guard.lookup(outbound.options),
    );
  }

  cancel(reason: string): void {
    this.sendCancel?.(reason);
    this.abort.abort();
    this.settle({ status: 'cancelled', errorCode: 'cancelled', error: reason });
  }

  private opened(ws: { send(text: string): void; close(): void }): void {
    const { ctx } = this;
    ctx.log('system', `connected to ${String(ctx.config.url)}\n`);
    this.sendCancel = (reason) => {
      try {
        ws.send(JSON.stringify({ type: 'cancel', runId: ctx.runId, reason }));
        ws.close();
      } catch {
        /* already closed */
      }
    };
    const wake = {
      agentId: ctx.agentId,
      runId: ctx.runId,
      companyId: ctx.companyId,
      context: ctx.context,
      apiUrl: ctx.apiUrl,
      runToken: ctx.runToken,
    };
    ws.send(JSON.stringify({ type: 'wake', ...wake }));
  }

  /** A gateway message: logged; `completed` and `failed` end the run. */
  private message(text: string): void {
    this.ctx.log('stdout', text.endsWith('\n') ? text : text + '\n');
    let msg: Record<string, unknown> | null = null;
    try {
      msg = JSON.parse(text) as Record<string, unknown>;
    } catch {
      return;
    }
    if (msg?.type === 'completed') this.settle({ status: 'succeeded', ...outcomeFromReport(msg) });
    else if (msg?.type === 'failed')
      this.settle({
        status: 'failed',
        errorCode: 'remote_reported_failure',
        error: typeof msg.error === 'string' ? msg.error : 'the gateway reported a failure',
        ...outcomeFromReport(msg),
      });
  }
}
