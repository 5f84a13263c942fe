import { domainErrors, type ErrorTable } from '../../common/errors/error-codes';

/** What the preferences area (sidebar, inbox, resource memberships) may answer besides validation and access errors. */
export const PREFERENCES_ERRORS = {
  invalid_dismissal: 422,
  invalid_reference: 422,
} as const satisfies ErrorTable;

export const preferencesError = domainErrors(PREFERENCES_ERRORS);
