import { domainErrors, type ErrorTable } from '../../common/errors/error-codes';

/** What the documents and annotations area may answer besides validation and access errors. */
export const DOCUMENT_ERRORS = {
  invalid_document_key: 400,
  document_locked: 409,
  stale_revision: 409,
  document_exists: 409,
  base_revision_required: 409,
  document_too_large: 413,
  selector_mismatch: 422,
  // plan decomposition into child issues (plan-decompositions.service.ts)
  stale_plan_revision: 409,
  plan_decompositions_disabled: 409,
  plan_revision_already_accepted: 409,
  plan_has_no_items: 422,
  plan_too_many_items: 422,
} as const satisfies ErrorTable;

export const documentError = domainErrors(DOCUMENT_ERRORS);
