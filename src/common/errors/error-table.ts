/**
 * The shape of an error table: each code with its one status (see error-codes.ts). On its own, with
 * no import, so that common.errors.ts (COMMON_ERRORS) and domain-error.ts (the helpers' codes) can
 * use it without a circle through error-codes.ts.
 */
export type ErrorTable = Record<string, 400 | 401 | 403 | 404 | 409 | 410 | 412 | 413 | 415 | 422 | 426 | 429 | 502 | 503>;
