import { ArgumentsHost, Logger } from '@nestjs/common';
import { QueryFailedError } from 'typeorm';
import { DomainError } from '../../src/common/errors/domain-error';
import { HttpExceptionFilter } from '../../src/common/errors/http-exception.filter';

/** The one error filter: every failure becomes `{ error, code, ... }`; a 500 never leaks internals. */
describe('HttpExceptionFilter', () => {
  function run(exception: unknown) {
    const res = { statusCode: 0, body: undefined as unknown, headersSent: false };
    // the parts of a Fastify reply the filter uses
    const response = {
      sent: false,
      raw: {
        get headersSent() {
          return res.headersSent;
        },
        end: () => undefined,
      },
      status(code: number) {
        res.statusCode = code;
        return this;
      },
      header() {
        return this;
      },
      send(body: unknown) {
        res.body = body;
        return this;
      },
    };
    const request = { id: 'req-42', method: 'POST', originalUrl: '/api/x', url: '/api/x' };
    const host = { switchToHttp: () => ({ getResponse: () => response, getRequest: () => request }) } as unknown as ArgumentsHost;
    new HttpExceptionFilter().catch(exception, host);
    return res;
  }

  it('answers an unexpected error with 500, the request id, and no message, stack or SQL; and logs it', () => {
    const spy = jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
    const res = run(new Error('connect ECONNREFUSED 10.0.0.1:5432 at Socket.<anonymous> (/srv/app/dist/x.js:1:1)'));
    expect(res.statusCode).toBe(500);
    expect(res.body).toEqual({ error: 'Internal server error', code: 'internal_error', requestId: 'req-42' });
    expect(spy).toHaveBeenCalled();
    expect(JSON.stringify(spy.mock.calls[0])).toContain('req-42');
    spy.mockRestore();
  });

  it('renders domain errors with their code and extra fields', () => {
    const res = run(new DomainError(409, 'document_locked', 'Document is locked', { key: 'plan', lockedAt: 'x' }));
    expect(res).toMatchObject({
      statusCode: 409,
      body: { error: 'Document is locked', code: 'document_locked', key: 'plan', lockedAt: 'x' },
    });
  });

  it('maps database constraint errors to 4xx without SQL', () => {
    const err = new QueryFailedError(
      'INSERT INTO secret_table VALUES ($1)',
      ['v'],
      Object.assign(new Error('duplicate key'), { code: '23505' }),
    );
    const res = run(err);
    expect(res.statusCode).toBe(409);
    expect(JSON.stringify(res.body)).not.toMatch(/INSERT|secret_table/);
  });
});
