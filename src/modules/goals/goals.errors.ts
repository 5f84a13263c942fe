import { domainErrors, type ErrorTable } from '../../common/errors/error-codes';

/** What the goals area may answer besides validation and access errors. */
export const GOAL_ERRORS = {
  invalid_reference: 422,
  goal_cycle: 422,
} as const satisfies ErrorTable;

export const goalError = domainErrors(GOAL_ERRORS);
