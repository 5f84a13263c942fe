import { domainErrors, type ErrorTable } from '../errors/error-codes';

/** What the live event endpoints may answer besides validation and access errors. */
export const LIVE_EVENT_ERRORS = {
  upgrade_required: 426,
} as const satisfies ErrorTable;

export const liveEventError = domainErrors(LIVE_EVENT_ERRORS);
