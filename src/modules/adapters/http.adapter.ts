import type { Response } from 'undici';
import { outboundGuard, OutboundTarget, refusalIn } from '../../common/net/outbound-guard';
import type { RunOutcome } from './run.types';
import type { AdapterExecutor, AdapterRun, AdapterRunContext, EnvironmentReport } from './adapter.types';
import { num, str } from './adapter.types';

const DEFAULT_SYNC_TIMEOUT_SEC = 120;
const DEFAULT_ASYNC_TIMEOUT_SEC = 3600;
const METHODS = ['POST', 'PUT', 'PATCH', 'GET'];

/** No allow-list, no loopback: the default when an executor is built without configuration. */
export const STRICT_OUTBOUND: OutboundTarget = { guard: outboundGuard({ allowHosts: [], allowRanges: [] }), options: {} };

const isObject = (v: unknown): v is Record<string, unknown> => !!v && typeof v === 'object' && !Array.isArray(v);

/** What a sync response body (or a completion callback) may report. */
export function outcomeFromReport(body: unknown): Pick<RunOutcome, 'usage' | 'result'> {
  if (!isObject(body)) return { usage: null, result: null };
  const usage = isObject(body.usage) ? { ...body.usage } : null;
  const costCents = typeof body.costCents === 'number' ? body.costCents : undefined;
  const withCost = costCents !== undefined ? { ...(usage ?? {}), costCents } : usage;
  const result: Record<string, unknown> = {};
  if (typeof body.summary === 'string') result.summary = body.summary.slice(0, 20_000);
  if (isObject(body.result)) Object.assign(result, body.result);
  return { usage: withCost, result: Object.keys(result).length ? result : null };
}

/**
 * `http`: one request to `url` with `{ agentId, runId, companyId, context, apiUrl, runToken }`.
 * sync: the response ends the run (2xx succeeded). async: 2xx means accepted; the remote later
 * calls POST /api/heartbeat-runs/{runId}/complete with the run token, or the run times out.
 */
export class HttpAdapter implements AdapterExecutor {
  readonly type = 'http';

  constructor(private readonly outbound: OutboundTarget = STRICT_OUTBOUND) {}

  readonly configSchema = {
    type: 'object',
    required: ['url'],
    properties: {
      url: { type: 'string', format: 'uri' },
      method: { type: 'string', enum: METHODS, default: 'POST' },
      headers: { type: 'object', additionalProperties: { type: 'string' } },
      mode: { type: 'string', enum: ['sync', 'async'], default: 'sync' },
      timeoutSec: {
        type: 'number',
        minimum: 0,
        description: `sync: request timeout (default ${DEFAULT_SYNC_TIMEOUT_SEC}); async: time to wait for the completion callback (default ${DEFAULT_ASYNC_TIMEOUT_SEC})`,
      },
      cancelUrl: { type: 'string', format: 'uri', description: 'async: POSTed `{ runId, reason }` when the run is cancelled' },
    },
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
    const c = ctx.config;
    const mode = c.mode === 'async' ? 'async' : 'sync';
    const timeoutSec = num(c.timeoutSec, 0) || (mode === 'async' ? DEFAULT_ASYNC_TIMEOUT_SEC : DEFAULT_SYNC_TIMEOUT_SEC);
    const abort = new AbortController();
    let cancelReason = '';
    let timedOut = false;
    let settle: (o: RunOutcome) => void = () => undefined;
    const ended = new Promise<RunOutcome>((resolve) => (settle = resolve));
    const timer = setTimeout(() => {
      timedOut = true;
      ctx.log('system', `timeout after ${timeoutSec}s\n`);
      abort.abort();
      settle({ status: 'timed_out', errorCode: 'timeout', error: `timed out after ${timeoutSec}s` });
    }, timeoutSec * 1000);
    timer.unref();

    const method = String(c.method ?? 'POST').toUpperCase();
    const payload = {
      agentId: ctx.agentId,
      runId: ctx.runId,
      companyId: ctx.companyId,
      context: ctx.context,
      apiUrl: ctx.apiUrl,
      runToken: ctx.runToken,
    };
    const request = async (): Promise<void> => {
      ctx.log('system', `${method} ${c.url} (${mode})\n`);
      let res: Response;
      try {
        res = await this.outbound.guard.fetch(
          String(c.url),
          {
            method,
            headers: { 'content-type': 'application/json', ...(isObject(c.headers) ? (c.headers as Record<string, string>) : {}) },
            body: method === 'GET' ? undefined : JSON.stringify(payload),
            signal: abort.signal,
          },
          this.outbound.options,
        );
      } catch (err) {
        if (timedOut || cancelReason) return;
        const refused = refusalIn(err);
        if (refused) settle({ status: 'failed', errorCode: 'url_not_allowed', error: refused.message });
        else settle({ status: 'failed', errorCode: 'adapter_http_unreachable', error: `request failed: ${(err as Error).message}` });
        return;
      }
      const text = await res.text().catch(() => '');
      ctx.log('stdout', text.slice(0, 64_000) + (text.endsWith('\n') ? '' : '\n'));
      let body: unknown;
      try {
        body = text ? JSON.parse(text) : undefined;
      } catch {
        body = undefined;
      }
      if (!res.ok) {
        settle({
          status: 'failed',
          errorCode: 'adapter_http_status',
          error: `remote answered HTTP ${res.status}`,
          result: { httpStatus: res.status },
        });
      } else if (mode === 'sync') {
        settle({ status: 'succeeded', ...outcomeFromReport(body) });
      } else {
        ctx.log('system', `accepted (HTTP ${res.status}); waiting for POST /api/heartbeat-runs/${ctx.runId}/complete\n`);
      }
    };
    void request();
    const done = ended.then((o) => {
      clearTimeout(timer);
      return o;
    });
    return {
      done,
      cancel: (reason) => {
        if (cancelReason) return;
        cancelReason = reason;
        abort.abort();
        const cancelUrl = str(c.cancelUrl);
        if (mode === 'async' && cancelUrl) {
          void this.outbound.guard
            .fetch(
              cancelUrl,
              {
                method: 'POST',
                headers: { 'content-type': 'application/json' },
                body: JSON.stringify({ runId: ctx.runId, reason }),
                signal: AbortSignal.timeout(5000),
              },
              this.outbound.options,
            )
            .then((r) => r.body?.cancel())
            .catch(() => undefined);
        }
        settle({ status: 'cancelled', errorCode: 'cancelled', error: reason });
      },
    };
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
