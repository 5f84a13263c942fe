import { domainErrors, type ErrorTable } from '../../common/errors/error-codes';

/** What the agents area may answer besides validation and access errors. */
export const AGENT_ERRORS = {
  invalid_agent_status: 409,
  hire_approval_pending: 409,
  agent_shortname_conflict: 409,
  company_required: 400,
  permissions_not_patchable: 400,
  desired_skills_not_patchable: 400,
  // a field of the request body (extra `{ field }`, see agent-fields.ts invalidField)
  invalid_field: 422,
  invalid_reports_to: 422,
  reports_to_cycle: 422,
  unknown_adapter_type: 422,
  invalid_adapter_config: 422,
  // a webhook target (http, gateway_a url) the outbound policy refuses
  url_not_allowed: 422,
  invalid_authorization_policy: 422,
  reserved_metadata_key: 422,
} as const satisfies ErrorTable;

/** The codes of a 422 naming a body field (what `invalidField` may throw). */
export type AgentFieldErrorCode = {
  [K in keyof typeof AGENT_ERRORS]: (typeof AGENT_ERRORS)[K] extends 422 ? K : never;
}[keyof typeof AGENT_ERRORS];

export const agentError = domainErrors(AGENT_ERRORS);
