import type { Context, Span } from '@opentelemetry/api';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { tracing } from './tracing';

const SERVER_SPAN = Symbol('serverSpan');
const SPAN_CONTEXT = Symbol('spanContext');
type Traced = FastifyRequest & { [SERVER_SPAN]?: Span; [SPAN_CONTEXT]?: Context };

/**
 * HTTP server spans, one per request, made here rather than by the HTTP instrumentation (which
 * wraps every emitter of every request; this costs three hooks): named by the route template
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
    req[SPAN_CONTEXT] = ctx;
    api.context.with(ctx, done);
  });
  // the body arrives on the socket's callbacks, outside the span's context: the handler (which
  // preHandler's done calls) runs in it again; cheaper than binding every request's emitter
  fastify.addHook('preHandler', (req: Traced, reply, done) => {
    const ctx = req[SPAN_CONTEXT];
    if (ctx) api.context.with(ctx, done);
    else done();
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
