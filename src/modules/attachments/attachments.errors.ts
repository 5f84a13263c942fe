import { domainErrors, type ErrorTable } from '../../common/errors/error-codes';

/** What the attachments area may answer besides validation and access errors. */
export const ATTACHMENT_ERRORS = {
  attachment_type_not_allowed: 415,
  invalid_issue_comment: 422,
} as const satisfies ErrorTable;

export const attachmentError = domainErrors(ATTACHMENT_ERRORS);
