import { domainErrors, type ErrorTable } from '../../common/errors/error-codes';

/** What the adapter administration may answer besides validation and access errors. */
export const ADAPTER_ERRORS = {
  adapter_not_found: 404,
  adapter_builtin: 409,
  adapter_exists: 409,
  adapter_type_mismatch: 422,
  adapter_package_invalid: 422,
  adapter_source_invalid: 422,
  adapter_version_pinned: 409,
  adapter_config_invalid: 422,
  adapter_not_external: 409,
  install_source_insecure: 422,
  code_tampered: 409,
} as const satisfies ErrorTable;

export const adapterError = domainErrors(ADAPTER_ERRORS);

/** What the company-scoped adapter routes of the new-agent form may answer. */
export const RUNTIME_SETUP_ERRORS = {
  adapter_not_found: 404,
  login_method_unsupported: 422,
  login_session_not_found: 404,
} as const satisfies ErrorTable;

export const runtimeSetupError = domainErrors(RUNTIME_SETUP_ERRORS);
