import { domainErrors, type ErrorTable } from '../../common/errors/error-codes';

/** What the routines area may answer besides validation and access errors. */
export const ROUTINE_ERRORS = {
  invalid_cron_expression: 422,
  invalid_timezone: 422,
  invalid_reference: 422,
  invalid_assignee: 422,
  routine_managed: 409,
} as const satisfies ErrorTable;

export const routineError = domainErrors(ROUTINE_ERRORS);
