import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { LoggerService, RequestMethod } from '@nestjs/common';
import { Logger as NestPinoLogger, Params, PinoLogger } from 'nestjs-pino';
import pino from 'pino';

/** Nest's start-up chatter (one line per module and per route) is debug, not info. */
const DEBUG_CONTEXTS = new Set(['InstanceLoader', 'RoutesResolver', 'RouterExplorer']);

/**
 * The one logger of the process: every line, from the first start-up line to a fatal error, is a
 * JSON line on stdout, or a pretty line when stdout is a terminal (and pino-pretty is installed).
 * Writes are synchronous so that a line logged just before `process.exit` is never lost.
 */
export function createRootLogger(
  level: string,
  /** `errorsToStderr`: error and fatal lines go to stderr, the others to `fd` (the CLI's JSON lines) */
  opts: { pretty?: boolean; destination?: NodeJS.WritableStream; fd?: 1 | 2; errorsToStderr?: boolean } = {},
): pino.Logger {
  const fd = opts.fd ?? 1;
  const options: pino.LoggerOptions = {
    level,
    hooks: {
      logMethod(args, method, lvl) {
        const first = args[0] as unknown;
        const context = typeof first === 'object' && first !== null ? (first as { context?: unknown }).context : undefined;
        if (lvl === 30 && typeof context === 'string' && DEBUG_CONTEXTS.has(context)) {
          if (this.isLevelEnabled('debug')) (this.debug as (...a: unknown[]) => void)(...args);
          return;
        }
        return method.apply(this, args);
      },
    },
  };
  const pretty = opts.pretty ?? ((fd === 1 ? process.stdout : process.stderr).isTTY === true && hasPrettyPrinter());
  if (pretty) {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const prettyStream = require('pino-pretty') as (o: Record<string, unknown>) => pino.DestinationStream;
    return pino(
      options,
      prettyStream({
        sync: true,
        singleLine: true,
        translateTime: 'SYS:HH:MM:ss.l',
        ignore: 'pid,hostname',
        destination: opts.destination ?? fd,
      }),
    );
  }
  if (opts.errorsToStderr && fd === 1 && !opts.destination) {
    const streams = [
      { level: 'trace' as const, stream: pino.destination({ dest: 1, sync: true }) },
      { level: 'error' as const, stream: pino.destination({ dest: 2, sync: true }) },
    ];
    return pino(options, pino.multistream(streams, { dedupe: true }));
  }
  return pino(options, opts.destination ?? pino.destination({ dest: fd, sync: true }));
}

/** A Nest LoggerService writing through `root` (context as a field), for Nest's own lines and `new Logger(ctx)`. */
export function nestLoggerFor(root: pino.Logger): LoggerService {
  return new NestPinoLogger(new PinoLogger({ pinoHttp: { logger: root } }), {});
}

/** The request logger (nestjs-pino over `root`): a request id on every line and response, credentials redacted. */
export function loggerOptions(root: pino.Logger): Params {
  return {
    forRoutes: [{ path: '{*path}', method: RequestMethod.ALL }],
    pinoHttp: {
      logger: root,
      // the HTTP layer assigns the id (requestId) and answers it in X-Request-Id; this is a fallback
      genReqId: requestId,
      redact: {
        paths: ['req.headers.authorization', 'req.headers.cookie', 'res.headers["set-cookie"]', 'req.headers["x-service-run-id"]'],
        censor: '[redacted]',
      },
      serializers: {
        // who called (the peer address of the connection) and with what; no other header
        req: (req: SerializedRequest) => ({
          id: req.id,
          method: req.method,
          url: redactUrl(req.url),
          remoteAddress: req.remoteAddress,
          ...(typeof req.headers?.['user-agent'] === 'string' ? { userAgent: req.headers['user-agent'].slice(0, 300) } : {}),
        }),
        // the status code only: response headers are not logged (they were an empty object, or a cookie)
        res: (res: { statusCode: number }) => ({ statusCode: res.statusCode }),
      },
      // probes are not logged (the middleware sees a rewritten url; originalUrl is the request's)
      autoLogging: { ignore: (req: IncomingMessage) => isHealthCheck(req) },
    },
  };
}

/** A request's id: the caller's X-Request-Id when it is a plain token, else a fresh UUID. */
export function requestId(req: IncomingMessage): string {
  const given = req.headers['x-request-id'];
  return typeof given === 'string' && /^[A-Za-z0-9._-]{1,100}$/.test(given) ? given : randomUUID();
}

/** Tokens that travel in paths (invite tokens, `/api/invites/{token}`) and JWTs, masked; query strings dropped. */
export function redactUrl(url: string | undefined): string | undefined {
  return url
    ?.split('?')[0]
    .replace(/\b(svc_[a-z]+_)[A-Za-z0-9_-]+/g, '$1[redacted]')
    .replace(/\beyJ[A-Za-z0-9_-]*\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*/g, '[redacted]');
}

/** pino-http's serialized request (pino-std-serializers). */
interface SerializedRequest {
  id: string;
  method: string;
  url: string;
  remoteAddress?: string;
  headers?: Record<string, string | string[] | undefined>;
}

/** `/api/health`, `/api/health/live`, `/api/health/ready` (any query string, trailing slash). */
export function isHealthCheck(req: IncomingMessage): boolean {
  const url = (req as IncomingMessage & { originalUrl?: string }).originalUrl ?? req.url ?? '';
  return /^\/api\/health(\/(live|ready))?\/?(\?|$)/.test(url);
}

function hasPrettyPrinter(): boolean {
  try {
    require.resolve('pino-pretty');
    return true;
  } catch {
    return false;
  }
}
