import { domainErrors, type ErrorTable } from '../../common/errors/error-codes';

/** What the companies area may answer besides validation and access errors. */
export const COMPANY_ERRORS = {
  company_deletion_disabled: 403,
  invalid_logo_asset: 422,
  unsafe_svg: 422,
  unsupported_media_type: 415,
} as const satisfies ErrorTable;

export const companyError = domainErrors(COMPANY_ERRORS);
