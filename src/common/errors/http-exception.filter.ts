import { ArgumentsHost, Catch, ExceptionFilter, HttpException, Logger } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { QueryFailedError } from 'typeorm';
import { DomainError } from './domain-error';

interface ErrorBody {
  error: string;
  code: string;
  [k: string]: unknown;
}

const PG_ERRORS: Record<string, [number, string, string]> = {
  '22P02': [400, 'invalid_input', 'Invalid input value'],
  '22001': [400, 'value_too_long', 'A value is too long'],
  '22003': [400, 'value_out_of_range', 'A number is out of range'],
  '22007': [400, 'invalid_datetime', 'Invalid date/time value'],
  '22008': [400, 'invalid_datetime', 'Date/time value out of range'],
  '23505': [409, 'conflict', 'A record with these values already exists'],
  '23503': [409, 'conflict', 'A referenced record does not exist or is still referenced'],
  '40001': [409, 'serialization_conflict', 'Concurrent update; retry the request'],
  '40P01': [409, 'serialization_conflict', 'Concurrent update; retry the request'],
};

const STATUS_CODES: Record<number, string> = {
  400: 'bad_request',
  401: 'unauthorized',
  403: 'forbidden',
  404: 'not_found',
  405: 'method_not_allowed',
  409: 'conflict',
  413: 'payload_too_large',
  415: 'unsupported_media_type',
  422: 'unprocessable',
  429: 'too_many_requests',
};

/** The one place errors become HTTP answers: always JSON, never a stack trace or SQL. */
@Catch()
export class HttpExceptionFilter implements ExceptionFilter {
  private readonly logger = new Logger('HttpError');

  catch(exception: unknown, host: ArgumentsHost): void {
    const ctx = host.switchToHttp();
    const res = ctx.getResponse<FastifyReply>();
    const req = ctx.getRequest<FastifyRequest>();
    const [status, body] = this.toBody(exception, req);
    if (status >= 500) {
      this.logger.error(
        { err: exception, requestId: req.id, method: req.method, url: req.originalUrl },
        `unhandled error on ${req.method} ${req.originalUrl} (request ${req.id})`,
      );
      body.requestId = req.id;
    }
    if (res.sent || res.raw.headersSent) {
      res.raw.end();
      return;
    }
    void res.status(status).header('Content-Type', 'application/json; charset=utf-8').send(body);
  }

  private toBody(exception: unknown, req: FastifyRequest): [number, ErrorBody] {
    if (exception instanceof DomainError) {
      return [exception.status, { error: exception.message, code: exception.code, ...exception.extra }];
    }
    if (exception instanceof HttpException) {
      const status = exception.getStatus();
      const r = exception.getResponse();
      let message = exception.message;
      if (typeof r === 'object' && r && 'message' in r) {
        const m = (r as { message: unknown }).message;
        message = Array.isArray(m) ? m.join('; ') : String(m);
      }
      if (status === 404 && /^Cannot (GET|POST|PUT|PATCH|DELETE|HEAD|OPTIONS)/.test(message)) {
        return [404, { error: `Route not found: ${req.method} ${req.url.split('?')[0]}`, code: 'route_not_found' }];
      }
      return [status, { error: message, code: STATUS_CODES[status] ?? (status >= 500 ? 'internal_error' : 'error') }];
    }
    const e = exception as { type?: string; status?: number; statusCode?: number; code?: string; message?: string; name?: string };
    if (exception instanceof QueryFailedError) {
      const pg = (exception as QueryFailedError & { driverError?: { code?: string; column?: string } }).driverError;
      if (pg?.code === '23502') {
        // a required field sent as null (the DTO let it through): name it, as validation would
        const field = (pg.column ?? 'field').replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());
        const message = `${field} must not be null`;
        return [400, { error: `Validation failed: ${message}`, code: 'validation_failed', fields: [{ field, messages: [message] }] }];
      }
      const mapped = pg?.code ? PG_ERRORS[pg.code] : undefined;
      if (mapped) return [mapped[0], { error: mapped[2], code: mapped[1] }];
    }
    const status = e?.status ?? e?.statusCode;
    if (typeof status === 'number' && status >= 400 && status < 500) {
      return [status, { error: e.message ?? 'Bad request', code: STATUS_CODES[status] ?? 'error' }];
    }
    return [500, { error: 'Internal server error', code: 'internal_error' }];
  }
}
