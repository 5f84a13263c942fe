import type { Response } from 'undici';
import { OutboundTarget, refusalIn } from '../../common/net/outbound-guard';
import type { RunOutcome } from './run.types';
import { COMMON_CONFIG_FIELDS } from './adapter-config-schema';
import type { AdapterDescription, AdapterExecutor, AdapterRun, AdapterRunContext, EnvironmentReport } from './adapter.types';
import { num, outcomeFromReport, str, STRICT_OUTBOUND } from './executor-kit';

const DEFAULT_SYNC_TIMEOUT_SEC = 120;
const DEFAULT_ASYNC_TIMEOUT_SEC = 3600;
const METHODS = ['POST', 'PUT', 'PATCH', 'GET'];

const isObject = (v: unknown): v is Record<string, unknown> => !!v && typeof v === 'object' && !Array.isArray(v);

/**
 * `http`: one request to `url` with `{ agentId, runId, companyId, context, apiUrl, runToken }`.
 * sync: the response ends the run (2xx succeeded). async: 2xx means accepted; the remote later
 * calls POST /api/heartbeat-runs/{runId}/complete with the run token, or the run times out.
 */
export class HttpAdapter implements AdapterExecutor {
  readonly type = 'http';

  constructor(private readonly outbound: OutboundTarget = STRICT_OUTBOUND) {}

  readonly description: AdapterDescription = {
    label: 'HTTP endpoint',
    configSchema: {
      type: 'object',
      required: ['url'],
      properties: {
        ...COMMON_CONFIG_FIELDS,
        url: { type: 'string', format: 'url' },
        method: { type: 'string', enum: ['GET', 'POST', 'PUT', 'PATCH'] },
        headers: { type: 'string-map' },
        payloadTemplate: { type: 'object' },
      },
    },
    skills: 'unsupported',
    genAiSystem: null,
    outboundUrlFields: [
      ['url', ['http:', 'https:']],
      ['cancelUrl', ['http:', 'https:']],
    ],
  };

  validateConfig(c: Record<string, unknown>): string[] {
    const errors: string[] = [];
    for (const k of ['url', 'cancelUrl']) {
      if (k === 'url' && !str(c.url)) {
        errors.push('url is required');
        continue;
      }
      if (c[k] === undefined) continue;
      try {
        const u = new URL(String(c[k]));
        if (u.protocol !== 'http:' && u.protocol !== 'https:') errors.push(`${k} must be http(s)`);
        else {
          const refused = this.outbound.guard.refusalOf(u.toString(), this.outbound.options);
          if (refused) errors.push(`${k}: ${refused.message}`);
        }
      } catch {
        errors.push(`${k} must be a URL`);
      }
    }
    if (c.method !== undefined && !METHODS.includes(String(c.method).toUpperCase()))
      errors.push(`method must be one of ${METHODS.join(', ')}`);
    if (c.mode !== undefined && c.mode !== 'sync' && c.mode !== 'async') errors.push('mode must be sync or async');
    if (c.headers !== undefined && (!isObject(c.headers) || Object.values(c.headers).some((v) => typeof v !== 'string'))) {
      errors.push('headers must map names to strings');
    }
    if (c.timeoutSec !== undefined && (typeof c.timeoutSec !== 'number' || c.timeoutSec < 0))
      errors.push('timeoutSec must be a number >= 0');
    return errors;
  }

  start(ctx: AdapterRunContext): AdapterRun {
    const call = new HttpCall(ctx, this.outbound);
    void call.request();
    return { done: call.done, cancel: (reason) => call.cancel(reason) };
  }

  async testEnvironment(c: Record<string, unknown>): Promise<EnvironmentReport> {
    const errors = this.validateConfig(c);
    if (errors.length) return { ok: false, checks: [{ name: 'config', ok: false, message: errors.join('; ') }] };
    try {
      const res = await this.outbound.guard.fetch(
        String(c.url),
        { method: 'HEAD', signal: AbortSignal.timeout(5000) },
        this.outbound.options,
      );
      await res.body?.cancel().catch(() => undefined);
      return { ok: true, checks: [{ name: 'reachable', ok: true, message: `HTTP ${res.status}` }] };
    } catch (err) {
      return { ok: false, checks: [{ name: 'reachable', ok: false, message: `unreachable: ${(err as Error).message}` }] };
    }
  }
}

/**
 * One run's call: the request with the run's context, its deadline, and how the answer (sync), a
 * later completion callback (async, elsewhere), a timeout or a cancel ends the run.
 */
class HttpCall {
  readonly done: Promise<RunOutcome>;
  private settle: (o: RunOutcome) => void = () => undefined;
  private readonly abort = new AbortController();
  private readonly c: Record<string, unknown>;
  private readonly mode: 'sync' | 'async';
  private readonly method: string;
  private cancelReason = '';
  private timedOut = false;

  constructor(
    private readonly ctx: AdapterRunContext,
    private readonly outbound: OutboundTarget,
  ) {
    this.c = ctx.config;
    this.mode = this.c.mode === 'async' ? 'async' : 'sync';
    this.method = String(this.c.method ?? 'POST').toUpperCase();
    const timeoutSec = num(this.c.timeoutSec, 0) || (this.mode === 'async' ? DEFAULT_ASYNC_TIMEOUT_SEC : DEFAULT_SYNC_TIMEOUT_SEC);
    const timer = setTimeout(() => {
      this.timedOut = true;
      ctx.log('system', `timeout after ${timeoutSec}s\n`);
      this.abort.abort();
      this.settle({ status: 'timed_out', errorCode: 'timeout', error: `timed out after ${timeoutSec}s` });
    }, timeoutSec * 1000);
    timer.unref();
    this.done = new Promise<RunOutcome>((resolve) => (this.settle = resolve)).then((o) => {
      clearTimeout(timer);
      return o;
    });
  }

  async request(): Promise<void> {
    const { ctx, c, method } = this;
    ctx.log('system', `${method} ${String(c.url)} (${this.mode})\n`);
    const payload = {
      agentId: ctx.agentId,
      runId: ctx.runId,
      companyId: ctx.companyId,
      context: ctx.context,
      apiUrl: ctx.apiUrl,
      runToken: ctx.runToken,
    };
    let res: Response;
    try {
      res = await this.outbound.guard.fetch(
        String(c.url),
        {
          method,
          headers: { 'content-type': 'application/json', ...(isObject(c.headers) ? (c.headers as Record<string, string>) : {}) },
          body: method === 'GET' ? undefined : JSON.stringify(payload),
          signal: this.abort.signal,
        },
        this.outbound.options,
      );
    } catch (err) {
      if (this.timedOut || this.cancelReason) return;
      const refused = refusalIn(err);
      if (refused) this.settle({ status: 'failed', errorCode: 'url_not_allowed', error: refused.message });
      else this.settle({ status: 'failed', errorCode: 'adapter_http_unreachable', error: `request failed: ${(err as Error).message}` });
      return;
    }
    await this.answered(res);
  }

  /** A sync answer ends the run; an async one (2xx) only says the remote accepted it. */
  private async answered(res: Response): Promise<void> {
    const text = await res.text().catch(() => '');
    this.ctx.log('stdout', text.slice(0, 64_000) + (text.endsWith('\n') ? '' : '\n'));
    let body: unknown;
    try {
      body = text ? JSON.parse(text) : undefined;
    } catch {
      body = undefined;
    }
    if (!res.ok)
      this.settle({
        status: 'failed',
        errorCode: 'adapter_http_status',
        error: `remote answered HTTP ${res.status}`,
        result: { httpStatus: res.status },
      });
    else if (this.mode === 'sync') this.settle({ status: 'succeeded', ...outcomeFromReport(body) });
    else this.ctx.log('system', `accepted (HTTP ${res.status}); waiting for POST /api/heartbeat-runs/${this.ctx.runId}/complete\n`);
  }

  cancel(reason: string): void {
    if (this.cancelReason) return;
    this.cancelReason = reason;
    this.abort.abort();
    const cancelUrl = str(this.c.cancelUrl);
    // an async remote is told (best effort, 5 s)
    if (this.mode === 'async' && cancelUrl) {
      void this.outbound.guard
        .fetch(
          cancelUrl,
          {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ runId: this.ctx.runId, reason }),
            signal: AbortSignal.timeout(5000),
          },
          this.outbound.options,
        )
        .then((r) => r.body?.cancel())
        .catch(() => undefined);
    }
    this.settle({ status: 'cancelled', errorCode: 'cancelled', error: reason });
  }
}
