import { domainErrors, ErrorTable } from '../../common/errors/error-codes';

export const SKILL_ERRORS = {
  skill_not_found: 404,
  skill_file_not_found: 404,
  catalog_skill_not_found: 404,
  invalid_skill_path: 422,
  invalid_skill_source: 422,
  // a URL source whose destination the outbound guard refuses (loopback, private, link-local, ...)
  url_not_allowed: 422,
  // a local source outside the configured roots, or not readable by other users when the service is root
  path_not_allowed: 422,
  invalid_skill_md: 422,
  skill_source_unreachable: 502,
  skill_source_too_large: 413,
  skill_not_editable: 422,
  skill_not_deletable: 409,
  skill_slug_taken: 409,
  skill_file_not_previewable: 422,
  skill_audit_unsupported: 422,
  skill_audit_failed: 422,
  skill_update_unsupported: 422,
  skill_locally_modified: 409,
  ambiguous_catalog_reference: 422,
  invalid_skill_selection: 422,
} as const satisfies ErrorTable;

export const skillError = domainErrors(SKILL_ERRORS);
