import type { ErrorTable } from './error-table';

/**
 * The codes of the generic helpers (src/common/errors/domain-error.ts) and of the checks every
 * route shares: validation (400 `validation_failed` with the fields, `malformed_json`), access
 * (401, 403), unknown ids (404), references to another company's records (422
 * `invalid_reference`). A domain's own codes live in its `<domain>.errors.ts`.
 */
export const COMMON_ERRORS = {
  bad_request: 400,
  validation_failed: 400,
  malformed_json: 400,
  unauthorized: 401,
  forbidden: 403,
  /** local trusted mode: a credential-less request whose Host or Origin does not name this machine (DNS rebinding) */
  host_not_allowed: 403,
  not_found: 404,
  conflict: 409,
  unprocessable: 422,
  invalid_reference: 422,
} as const satisfies ErrorTable;

export type CommonErrorCode = keyof typeof COMMON_ERRORS;

/** A bug: the exception filter's answer (logged with the request id, never with internals). */
export const SERVER_ERRORS = { internal_error: 500 } as const;
