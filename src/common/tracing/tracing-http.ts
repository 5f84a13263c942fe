import type { Span } from '@opentelemetry/api';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { tracing } from './tracing';

const SERVER_SPAN = Symbol('serverSpan');
type Traced = FastifyRequest & { [SERVER_SPAN]?: Span };

/**
 * HTTP server spans, one per request, made here rather than by the HTTP instrumentation (which
 * wraps every emitter of every request; this costs a hook pair): named by the route template
 * (`GET /api/companies/:companyId/issues`), never the raw path or query (which may hold a token:
 * invite links, claim URLs); the parent comes from the request's `traceparent` (an agent's calls
 * join its run's trace). Registered only when tracing is on.
 */
export function registerTraceRoutes(fastify: FastifyInstance): void {
  const t = tracing();
  if (!t) return;
  const { api } = t;
  fastify.addHook('onRequest', (req: Traced, reply, done) => {
    const route = req.routeOptions.url ?? '(unmatched)';
    const parent = api.propagation.extract(api.ROOT_CONTEXT, req.headers);
    const span = t.tracer.startSpan(
      `${req.method} ${route}`,
      { kind: api.SpanKind.SERVER, attributes: { 'http.request.method': req.method, 'http.route': route, 'url.path': route } },
      parent,
    );
    req[SERVER_SPAN] = span;
    const ctx = api.trace.setSpan(parent, span);
    // the body arrives on the request's emitter: its listeners (added later) run in the span's context
    api.context.bind(ctx, req.raw);
    api.context.with(ctx, done);
  });
  fastify.addHook('onResponse', (req: Traced, reply, done) => {
    const span = req[SERVER_SPAN];
    if (span) {
      span.setAttribute('http.response.status_code', reply.statusCode);
      if (reply.statusCode >= 500) span.setStatus({ code: api.SpanStatusCode.ERROR });
      span.end();
    }
    done();
  });
}
