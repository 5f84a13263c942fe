import { domainErrors, type ErrorTable } from '../../common/errors/error-codes';

/** What instance administration (settings, users, backups) may answer besides validation and access errors. */
export const INSTANCE_ERRORS = {
  last_instance_admin: 409,
  unknown_company: 422,
  backup_failed: 503,
  backup_engine_unavailable: 422,
} as const satisfies ErrorTable;

export const instanceError = domainErrors(INSTANCE_ERRORS);
