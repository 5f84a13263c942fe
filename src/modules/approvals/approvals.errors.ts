import { domainErrors, type ErrorTable } from '../../common/errors/error-codes';

/** What the approvals area may answer besides validation and access errors. */
export const APPROVAL_ERRORS = {
  approval_already_decided: 409,
} as const satisfies ErrorTable;

export const approvalError = domainErrors(APPROVAL_ERRORS);
