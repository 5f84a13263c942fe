import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { RequestMethod } from '@nestjs/common';
import type { Params } from 'nestjs-pino';
import { AppConfig } from './config/app-config';

/** JSON lines (pretty in a TTY), a request id on every line and response, credentials redacted. */
export function loggerOptions(config: AppConfig): Params {
  const pretty = process.stdout.isTTY && process.env.NODE_ENV !== 'production' && config.logLevel !== 'silent' && hasPrettyPrinter();
  return {
    forRoutes: [{ path: '{*path}', method: RequestMethod.ALL }],
    pinoHttp: {
      level: config.logLevel,
      // the HTTP layer assigns the id (requestId) and answers it in X-Request-Id; this is a fallback
      genReqId: requestId,
      redact: {
        paths: ['req.headers.authorization', 'req.headers.cookie', 'res.headers["set-cookie"]', 'req.headers["x-service-run-id"]'],
        censor: '[redacted]',
      },
      serializers: {
        req: (req: { id: string; method: string; url: string }) => ({ id: req.id, method: req.method, url: redactUrl(req.url) }),
      },
      autoLogging: { ignore: (req: IncomingMessage) => req.url === '/api/health' },
      ...(pretty ? { transport: { target: 'pino-pretty', options: { singleLine: true } } } : {}),
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

function hasPrettyPrinter(): boolean {
  try {
    require.resolve('pino-pretty');
    return true;
  } catch {
    return false;
  }
}
