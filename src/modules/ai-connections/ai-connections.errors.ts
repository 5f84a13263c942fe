import { domainErrors, type ErrorTable } from '../../common/errors/error-codes';

/** What the AI connections may answer besides validation and access errors. */
export const AI_CONNECTION_ERRORS = {
  /** browser and subscription sign-ins (the board UI's "subscription" method): only API keys are supported */
  login_method_unsupported: 422,
  /** a sign-in session: there are none (an API-key connection is complete when created) */
  login_session_not_found: 404,
  /** a base URL the destination policy refuses (loopback, private, link-local …) */
  url_not_allowed: 422,
  /** an agent asks for a connection that does not exist or does not fit its runtime */
  ai_connection_unavailable: 422,
} as const satisfies ErrorTable;

export const aiConnectionError = domainErrors(AI_CONNECTION_ERRORS);
