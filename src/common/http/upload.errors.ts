import { domainErrors, type ErrorTable } from '../errors/error-codes';

/** What a multipart upload (attachments, assets, skill and package archives) may answer. */
export const UPLOAD_ERRORS = {
  invalid_upload: 400,
  empty_file: 400,
  file_too_large: 413,
} as const satisfies ErrorTable;

export const uploadError = domainErrors(UPLOAD_ERRORS);
