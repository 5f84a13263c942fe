import { domainErrors, type ErrorTable } from '../../common/errors/error-codes';

/** What the metrics scrape may answer. */
export const METRICS_ERRORS = {
  metrics_token_required: 401,
  metrics_loopback_only: 403,
} as const satisfies ErrorTable;

export const metricsError = domainErrors(METRICS_ERRORS);
