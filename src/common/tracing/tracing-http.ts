import type { FastifyInstance } from 'fastify';
import { tracing } from './tracing';

/**
 * HTTP server spans named by the route template (`GET /api/companies/:companyId/issues`), with the
 * raw path and query (which may hold a token: invite links, claim URLs) replaced by that template.
 * Registered only when tracing is on.
 */
export function registerTraceRoutes(fastify: FastifyInstance): void {
  const t = tracing();
  if (!t) return;
  fastify.addHook('onRequest', (req, _reply, done) => {
    const route = req.routeOptions.url ?? '(unmatched)';
    const ctx = t.api.context.active();
    const rpc = t.getRPCMetadata(ctx);
    if (rpc?.type === t.rpcHttp) rpc.route = route;
    const span = t.api.trace.getSpan(ctx);
    if (span) {
      span.updateName(`${req.method} ${route}`);
      span.setAttributes({
        'http.route': route,
        'http.target': route,
        'url.path': route,
        'url.query': '',
        'http.url': route,
        'url.full': route,
      });
    }
    done();
  });
}
