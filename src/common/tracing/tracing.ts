import type * as Api from '@opentelemetry/api';
import type { suppressTracing as SuppressTracing } from '@opentelemetry/core';

/**
 * OpenTelemetry traces (docs/tracing.md): off unless the standard OTEL_* variables ask for them.
 * Nothing of OpenTelemetry is loaded when they do not: startTracing imports the SDK dynamically,
 * and every hook in the service asks `tracing()` first (null when off), so tracing costs nothing
 * then. Only types are imported here at compile time.
 */
export interface Tracing {
  api: typeof Api;
  tracer: Api.Tracer;
  suppressTracing: typeof SuppressTracing;
  shutdown(): Promise<void>;
}

let active: Tracing | null = null;

/** The running tracing, or null when it is off. */
export function tracing(): Tracing | null {
  return active;
}

export const DEFAULT_SERVICE_NAME = 'agent-orchestration-service';

/**
 * Whether the environment asks for traces: an OTLP endpoint (OTEL_EXPORTER_OTLP_ENDPOINT or
 * OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) or an exporter (OTEL_TRACES_EXPORTER); never when
 * OTEL_SDK_DISABLED=true or OTEL_TRACES_EXPORTER=none.
 */
export function tracingRequested(env: NodeJS.ProcessEnv): boolean {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return false;
  const exporters = (env.OTEL_TRACES_EXPORTER ?? '')
    .split(',')
    .map((e) => e.trim())
    .filter(Boolean);
  if (exporters.includes('none')) return false;
  return exporters.length > 0 || !!env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim() || !!env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim();
}

/** A URL reduced to where it goes: user-supplied URLs (webhooks) may carry credentials in their path or query. */
export function originOnly(url: string | undefined): string {
  if (!url) return '';
  try {
    return new URL(url).origin;
  } catch {
    return '';
  }
}

/**
 * Starts the Node SDK when the environment asks for traces; must run before the HTTP server and
 * `pg` are loaded (main.ts loads the application after it). Exporter, sampler, propagators and
 * resource come from the standard OTEL_* variables; only traces are set up (metrics stay Prometheus).
 */
export async function startTracing(env: NodeJS.ProcessEnv = process.env): Promise<Tracing | null> {
  if (active || !tracingRequested(env)) return active;
  const [api, core, { NodeSDK }, { HttpInstrumentation }, { PgInstrumentation }, { UndiciInstrumentation }, { dbSpanName }] =
    await Promise.all([
      import('@opentelemetry/api'),
      import('@opentelemetry/core'),
      import('@opentelemetry/sdk-node'),
      import('@opentelemetry/instrumentation-http'),
      import('@opentelemetry/instrumentation-pg'),
      import('@opentelemetry/instrumentation-undici'),
      import('./sql-summary'),
    ]);
  const sdk = new NodeSDK({
    serviceName: env.OTEL_SERVICE_NAME?.trim() ? undefined : DEFAULT_SERVICE_NAME,
    metricReaders: [],
    logRecordProcessors: [],
    instrumentations: [
      new HttpInstrumentation({
        // incoming requests get their server span from a Fastify hook pair (tracing-http.ts)
        ignoreIncomingRequestHook: () => true,
        // the full URL of a request or call may hold a token (invite links, webhook paths): the
        // server span gets the route template (tracing-http.ts), client spans the origin only
        startOutgoingSpanHook: (req) => ({
          'http.url': `${req.protocol ?? 'http:'}//${req.hostname ?? req.host ?? ''}${req.port ? `:${req.port}` : ''}`,
          'http.target': '',
        }),
      }),
      new PgInstrumentation({
        requireParentSpan: true,
        ignoreConnectSpans: true,
        enhancedDatabaseReporting: false,
        // the statement's kind and table only: never its text (literals) nor its parameters
        requestHook: (span, info) => {
          if (!span.isRecording()) return; // not sampled: no string work
          const name = dbSpanName(info.query.text);
          span.updateName(name);
          span.setAttributes({ 'db.statement': name, 'db.query.text': name });
        },
      }),
      new UndiciInstrumentation({
        startSpanHook: (req) => ({ 'url.full': originOnly(`${req.origin}`), 'url.path': '', 'url.query': '' }),
      }),
    ],
  });
  sdk.start();
  active = {
    api,
    tracer: api.trace.getTracer(DEFAULT_SERVICE_NAME),
    suppressTracing: core.suppressTracing,
    shutdown: () => sdk.shutdown(),
  };
  return active;
}

/** Runs fn with no span recorded for what it does (transaction control statements: a span each would double a mutation's DB spans). */
export function untraced<T>(fn: () => T): T {
  const t = active;
  return t ? t.api.context.with(t.suppressTracing(t.api.context.active()), fn) : fn();
}

/** Flushes and stops the SDK (on shutdown). */
export async function stopTracing(): Promise<void> {
  const t = active;
  active = null;
  await t?.shutdown().catch(() => undefined);
}
