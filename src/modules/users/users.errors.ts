import { domainErrors, type ErrorTable } from '../../common/errors/error-codes';

/**
 * What sign-up, sign-in, board tokens and the board claim may answer besides validation and access
 * errors.
 */
export const USER_ERRORS = {
  sign_up_disabled: 403,
  invalid_credentials: 401,
  email_taken: 409,
  slug_taken: 409,
  user_required: 409,
  session_required: 403,
  claim_used: 409,
  claim_expired: 410,
  instance_owned: 409,
  too_many_attempts: 429,
} as const satisfies ErrorTable;

export const userError = domainErrors(USER_ERRORS);
