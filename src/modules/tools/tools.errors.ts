import { domainErrors, type ErrorTable } from '../../common/errors/error-codes';

/** What the tools area may answer besides validation and access errors. */
export const TOOL_ERRORS = {
  invalid_reference: 422,
  invalid_transport_config: 422,
  sensitive_config: 422,
  url_not_allowed: 422,
  unsupported_selector: 422,
  unsupported_option: 422,
  tool_prefix_taken: 409,
  profile_key_taken: 409,
  connection_archived: 409,
  action_request_decided: 409,
  action_request_expired: 409,
  remote_unreachable: 502,
} as const satisfies ErrorTable;

export const toolError = domainErrors(TOOL_ERRORS);
