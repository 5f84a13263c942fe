import type { CommonErrorCode } from './common.errors';

/** A rule of the spec that failed. The exception filter turns it into `{ error, code, ...extra }`. */
export class DomainError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly extra: Record<string, unknown> = {},
  ) {
    super(message);
  }
}

/** The generic helpers answer the codes of COMMON_ERRORS only; a domain's own code goes through its table's helper. */
export const badRequest = (message: string, extra: Record<string, unknown> = {}, code: CommonErrorCode = 'bad_request') =>
  new DomainError(400, code, message, extra);
export const unauthorized = (message = 'Authentication required') => new DomainError(401, 'unauthorized', message);
export const forbidden = (message = 'Forbidden', extra: Record<string, unknown> = {}) => new DomainError(403, 'forbidden', message, extra);
export const notFound = (what: string) => new DomainError(404, 'not_found', `${what} not found`);
export const conflict = (message: string, code: CommonErrorCode = 'conflict', extra: Record<string, unknown> = {}) =>
  new DomainError(409, code, message, extra);
export const unprocessable = (message: string, code: CommonErrorCode = 'unprocessable', extra: Record<string, unknown> = {}) =>
  new DomainError(422, code, message, extra);
