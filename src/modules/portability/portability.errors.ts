import { domainErrors, type ErrorTable } from '../../common/errors/error-codes';

/** What the portability area may answer besides validation and access errors. */
export const PORTABILITY_ERRORS = {
  /** the package cannot be read: the details name the file and the problem */
  invalid_package: 422,
  /** a file or the package exceeds the documented size limits */
  package_too_large: 422,
  /** applying failed part-way (nothing was kept); the details name the file */
  import_failed: 422,
  /** `replace` on a company-scoped route, or a target other than the route company */
  import_not_allowed: 422,
  /** exports and imports of a company: only the board or the company's CEO agent */
  portability_forbidden: 403,
} as const satisfies ErrorTable;

export const portabilityError = domainErrors(PORTABILITY_ERRORS);
