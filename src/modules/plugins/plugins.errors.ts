import { domainErrors, type ErrorTable } from '../../common/errors/error-codes';

/** What the plugins area may answer besides validation and access errors. */
export const PLUGIN_ERRORS = {
  plugin_not_found: 404,
  plugin_manifest_invalid: 422,
  plugin_source_invalid: 422,
  plugin_already_installed: 409,
  plugin_key_mismatch: 422,
  plugin_disabled: 409,
  plugin_worker_unavailable: 503,
  plugin_worker_error: 502,
  plugin_worker_timeout: 502,
  plugin_tool_not_found: 404,
  plugin_tool_input_invalid: 422,
  plugin_endpoint_not_found: 404,
  plugin_job_not_found: 404,
  plugin_config_invalid: 422,
  plugin_folder_not_found: 404,
  plugin_folder_invalid: 422,
  install_source_insecure: 422,
  code_tampered: 409,
} as const satisfies ErrorTable;

export const pluginError = domainErrors(PLUGIN_ERRORS);
