import { domainErrors, type ErrorTable } from '../../common/errors/error-codes';

/**
 * What the access area (members, invites, join requests) may answer besides validation and access
 * errors.
 */
export const ACCESS_ERRORS = {
  last_owner: 409,
  invite_revoked: 410,
  invite_expired: 410,
  already_member: 409,
  join_type_not_allowed: 422,
  user_required: 422,
  invalid_claim_secret: 403,
  join_request_not_approved: 409,
  join_request_not_pending: 409,
  api_key_already_claimed: 409,
  agent_not_keyable: 409,
  url_key_taken: 409,
} as const satisfies ErrorTable;

export const accessError = domainErrors(ACCESS_ERRORS);
