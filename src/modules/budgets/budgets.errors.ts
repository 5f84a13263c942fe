import { domainErrors, type ErrorTable } from '../../common/errors/error-codes';

/** What the budgets area may answer besides validation, access and not-found errors. */
export const BUDGET_ERRORS = {
  invalid_scope: 422,
  incident_resolved: 409,
  budget_not_above_spend: 422,
} as const satisfies ErrorTable;

export const budgetError = domainErrors(BUDGET_ERRORS);
