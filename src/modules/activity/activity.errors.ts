import { domainErrors, type ErrorTable } from '../../common/errors/error-codes';

/** What the activity chain routes may answer besides validation and access errors. */
export const ACTIVITY_ERRORS = {
  activity_chain_empty: 409,
} as const satisfies ErrorTable;

export const activityError = domainErrors(ACTIVITY_ERRORS);
