import type { ErrorTable } from '../errors/error-codes';

/**
 * The run header checks of the auth guard (X-Service-Run-Id). On a run-bound route the header is
 * the credential's proof of a live run, so a bad one is a refusal (403, as listed); on other routes
 * it is bad input (422).
 */
export const AUTH_ERRORS = {
  run_id_mismatch: 403,
  run_not_live: 403,
} as const satisfies ErrorTable;
