import type * as Api from '@opentelemetry/api';

/**
 * OpenTelemetry traces (docs/tracing.md): off unless the standard OTEL_* variables ask for them.
 * Nothing of OpenTelemetry is loaded when they do not: startTracing imports the SDK dynamically,
 * and every hook in the service asks `tracing()` first (null when off), so tracing costs nothing
 * then. Only types are imported here at compile time.
 */
export interface Tracing {
  api: typeof Api;
  tracer: Api.Tracer;
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
  const [api, { NodeSDK }, { UndiciInstrumentation }, { traceStatements }, pg] = await Promise.all([
    import('@opentelemetry/api'),
    import('@opentelemetry/sdk-node'),
    import('@opentelemetry/instrumentation-undici'),
    import('./db-spans'),
    import('pg'),
  ]);
  const sdk = new NodeSDK({
    serviceName: env.OTEL_SERVICE_NAME?.trim() ? undefined : DEFAULT_SERVICE_NAME,
    metricReaders: [],
    logRecordProcessors: [],
    instrumentations: [
      // server spans come from Fastify hooks (tracing-http.ts), statement spans from db-spans.ts;
      // the service's outbound calls (webhooks, imports, registries) all go through fetch (undici).
      // A full URL may hold a token (webhook paths, signed links): client spans get the origin only
      new UndiciInstrumentation({
        startSpanHook: (req) => ({ 'url.full': originOnly(`${req.origin}`), 'url.path': '', 'url.query': '' }),
      }),
    ],
  });
  sdk.start();
  const tracer = api.trace.getTracer(DEFAULT_SERVICE_NAME);
  // database spans: a thin wrapper of node-postgres (db-spans.ts), not the pg instrumentation
  traceStatements(api, tracer, pg);
  active = { api, tracer, shutdown: () => sdk.shutdown() };
  return active;
}

/** Flushes and stops the SDK (on shutdown). */
export async function stopTracing(): Promise<void> {
  const t = active;
  active = null;
  await t?.shutdown().catch(() => undefined);
}
