import type * as Api from '@opentelemetry/api';
import { dbSpanName } from './sql-summary';

/** Transaction control statements get no span: the statements around them have theirs. */
const TX_CONTROL = new Set(['BEGIN', 'COMMIT', 'ROLLBACK', 'START TRANSACTION']);

const WRAPPED = Symbol.for('agent-orchestration-service.db-spans');

type QueryFn = (this: unknown, ...args: unknown[]) => unknown;
interface PgModule {
  Client: { prototype: { query: QueryFn } & { [WRAPPED]?: true } };
  Pool: { prototype: { connect: QueryFn } };
}
interface PgError {
  code?: unknown;
}

/**
 * Database spans: one CLIENT span per statement of a traced request or run, named by the
 * statement's kind and first table (`INSERT issues`; never its text or parameters), made by a thin
 * wrapper of node-postgres' `Client#query` that both the service's own statements and TypeORM's go
 * through.
 *
 * Why not the pg instrumentation: it wraps every query, connect and pool call, binds each callback
 * to its context and sets connection attributes on every span, which made tracing cost an issue
 * create ~25 % more CPU (docs/tracing.md). This wrapper does nothing for a statement outside a
 * recording span (no parent, or a trace the sampler dropped) beyond one context lookup, and for a
 * recorded one a span start and end: callbacks and promises keep their async context by
 * themselves, and a statement span has no children.
 */
export function traceStatements(api: typeof Api, tracer: Api.Tracer, pg: PgModule): void {
  const proto = pg.Client.prototype;
  if (proto[WRAPPED]) return;
  const query = proto.query;
  const attributesOf = (name: string): Api.Attributes => ({
    'db.system': 'postgresql',
    'db.system.name': 'postgresql',
    'db.operation.name': name.split(' ', 1)[0],
    'db.statement': name,
    'db.query.text': name,
  });
  proto.query = function tracedQuery(this: unknown, ...args: unknown[]): unknown {
    const parent = api.trace.getSpan(api.context.active());
    const config = args[0] as string | { text?: unknown; submit?: unknown; callback?: unknown } | undefined;
    const text = typeof config === 'string' ? config : config?.text;
    // a submittable (a cursor, a stream) reports on its own emitter: left untraced
    if (!parent?.isRecording() || typeof text !== 'string' || TX_CONTROL.has(text) || (typeof config === 'object' && config?.submit))
      return query.apply(this, args);
    const name = dbSpanName(text);
    const span = tracer.startSpan(name, { kind: api.SpanKind.CLIENT, attributes: attributesOf(name) });
    const end = (err?: PgError | null): void => {
      if (err) span.setStatus({ code: api.SpanStatusCode.ERROR, message: typeof err.code === 'string' ? `SQLSTATE ${err.code}` : 'error' });
      span.end();
    };
    const last = args.length - 1;
    if (typeof args[last] === 'function') {
      // callback style (TypeORM): (text, values, callback)
      const callback = args[last] as (err: PgError | null, ...rest: unknown[]) => unknown;
      args[last] = function (this: unknown, err: PgError | null, ...rest: unknown[]) {
        end(err);
        return callback.call(this, err, ...rest);
      };
      return query.apply(this, args);
    }
    const result = query.apply(this, args) as Promise<unknown> | undefined;
    if (result && typeof result.then === 'function')
      result.then(
        () => end(),
        (err: PgError) => end(err ?? {}),
      );
    else end();
    return result;
  };
  // a pool hands a waiting caller its connection from the callback of whoever released one: the
  // callback runs in its caller's context, so that a `pool.query` statement gets its own parent
  const pool = pg.Pool.prototype;
  const connect = pool.connect;
  pool.connect = function boundConnect(this: unknown, ...args: unknown[]): unknown {
    if (typeof args[0] === 'function') args[0] = api.context.bind(api.context.active(), args[0] as QueryFn);
    return connect.apply(this, args);
  };
  proto[WRAPPED] = true;
}
