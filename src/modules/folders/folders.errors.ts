import { domainErrors, type ErrorTable } from '../../common/errors/error-codes';

/** What the folders area may answer besides validation and access errors. */
export const FOLDER_ERRORS = {
  not_found: 404,
  folder_name_taken: 409,
  folder_system: 409,
  invalid_reference: 422,
  folder_kind_mismatch: 422,
  folder_cycle: 422,
  folder_too_deep: 422,
  folder_personal: 403,
} as const satisfies ErrorTable;

export const folderError = domainErrors(FOLDER_ERRORS);
