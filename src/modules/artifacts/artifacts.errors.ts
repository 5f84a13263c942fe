import { domainErrors, type ErrorTable } from '../../common/errors/error-codes';

/** What the artifacts and work products area may answer besides validation and access errors. */
export const ARTIFACT_ERRORS = {
  invalid_cursor: 400,
  work_product_target_required: 422,
  invalid_attachment: 422,
} as const satisfies ErrorTable;

export const artifactError = domainErrors(ARTIFACT_ERRORS);
