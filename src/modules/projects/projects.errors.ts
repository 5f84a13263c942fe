import { domainErrors, type ErrorTable } from '../../common/errors/error-codes';

/** What the projects area (projects, workspaces, runtime services) may answer besides validation and access errors. */
export const PROJECT_ERRORS = {
  ambiguous_project_shortname: 409,
  project_shortname_conflict: 409,
  invalid_env: 422,
  invalid_workspace: 422,
  primary_required: 422,
  invalid_action: 400,
  runtime_owned_by_other_instance: 409,
  runtime_not_configured: 422,
  cwd_not_found: 422,
  // a cwd outside SERVICE_WORKSPACE_ROOTS, or inside the service's data or key files
  path_not_allowed: 422,
} as const satisfies ErrorTable;

export const projectError = domainErrors(PROJECT_ERRORS);
