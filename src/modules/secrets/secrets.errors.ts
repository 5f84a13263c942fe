import { domainErrors, type ErrorTable } from '../../common/errors/error-codes';

/** What the secrets area may answer besides validation and access errors. */
export const SECRET_ERRORS = {
  secret_name_taken: 409,
  unknown_secret_provider: 400,
  // resolution failures (SECRET_ERROR_CODES): a run launch fails with the code
  secret_not_found: 422,
  secret_version_not_found: 422,
  secret_master_key_mismatch: 422,
  secret_decryption_failed: 422,
  secret_provider_not_configured: 422,
  secret_external_ref_unresolvable: 422,
  // references in configuration (thrown with the offending field, see secret-binding.ts invalidField)
  invalid_secret_reference: 422,
  inline_secret_not_allowed: 422,
  // adding or changing a secret binding: the board or agents:create (an agent's own key is not enough)
  secret_binding_not_granted: 403,
  // low-trust review agents get no secrets, through env or the API
  low_trust_secret_binding: 422,
  // the run-bound value read
  run_not_live: 403,
  skill_test_run_denied: 403,
  low_trust_agent_denied: 403,
  secret_alias_not_granted: 403,
  // user secrets
  user_secret_key_taken: 409,
  user_secret_exists: 409,
  user_secret_definition_mismatch: 422,
  user_secret_definition_archived: 422,
  // secret proposals
  secret_proposal_pending: 409,
  secret_proposal_decided: 409,
  secret_proposal_value_required: 422,
  // provider configurations are the operator's (environment), not the API's
  secret_provider_config_read_only: 422,
} as const satisfies ErrorTable;

export const secretError = domainErrors(SECRET_ERRORS);
