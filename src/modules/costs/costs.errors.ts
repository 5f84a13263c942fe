import { domainErrors, type ErrorTable } from '../../common/errors/error-codes';

/** What the costs and finance area may answer besides validation and access errors. */
export const COST_ERRORS = {
  invalid_range: 400,
  invalid_reference: 422,
  unpriced_with_cost: 422,
  cost_event_conflict: 409,
  idempotency_key_reused: 409,
  finance_event_conflict: 409,
} as const satisfies ErrorTable;

export const costError = domainErrors(COST_ERRORS);
