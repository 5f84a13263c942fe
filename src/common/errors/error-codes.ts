import { DomainError } from './domain-error';
import type { ErrorTable } from './error-table';

/**
 * Typed domain errors. Each domain declares its codes with their one status:
 *
 *   export const SKILL_ERRORS = { skill_not_found: 404, skill_audit_failed: 422 } as const satisfies ErrorTable;
 *   export const skillError = domainErrors(SKILL_ERRORS);
 *   throw skillError('skill_audit_failed', 'Audit failed', { codes });
 *
 * so a code cannot be thrown with two statuses, and the table documents what a domain may answer.
 */
export type { ErrorTable };

export function domainErrors<T extends ErrorTable>(table: T) {
  return (code: keyof T & string, message: string, extra: Record<string, unknown> = {}): DomainError =>
    new DomainError(table[code], code, message, extra);
}
